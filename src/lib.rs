//! `tns`: one binary that composes the roles. The role crates (`tns-api`, `tns-scheduler`,
//! `tns-jobs`, `tns-admin`) never depend on each other; this crate decides which of them a
//! process runs and wires them to the shared parts (configuration, the database, the adapter
//! plugins).

/// Every process this crate composes (the binary, the benchmarks, the integration tests)
/// allocates through mimalloc: a request makes many small, short-lived allocations, and with
/// mimalloc the metered call served about half as many again per second as with glibc's
/// allocator (bench/README.md, "Where the per-request time went"). Plugins keep their own allocator: each side of the
/// adapter ABI frees only what it allocated.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod config;
pub mod probes;
pub mod roles;
