//! The C ABI between the host and a plugin (version [`ABI_VERSION`]).
//!
//! A plugin exports these symbols (use [`export_adapter!`](crate::export_adapter)):
//!
//! ```text
//! u32   tns_adapter_abi_version(void)                          checked before anything else
//! void* tns_adapter_create(cfg*, cfg_len, TnsBuf* err_out)     NULL + error JSON on failure
//! void  tns_adapter_destroy(void* instance)
//! i32   tns_adapter_call(instance, op, in*, in_len, TnsBuf* out)
//! void  tns_adapter_free(TnsBuf)                               frees what the plugin allocated
//! ```
//!
//! `cfg` and `in` are JSON. `call` answers [`STATUS_OK`] with the result JSON in `out`, or
//! [`STATUS_ERR`] with an [`AdapterError`] JSON. Every export catches panics: a panic is
//! reported as a transient error (its outcome is unknown, so the host looks up before
//! retrying) and never unwinds into the host.

use std::{
    ffi::c_void,
    panic::{catch_unwind, AssertUnwindSafe},
};

use serde::{de::DeserializeOwned, Serialize};

use crate::{Adapter, AdapterError};

/// Bumped on any incompatible change of the symbols, the ops or the JSON shapes.
pub const ABI_VERSION: u32 = 7;

pub const STATUS_OK: i32 = 0;
pub const STATUS_ERR: i32 = 1;

/// Bytes allocated by the plugin and handed to the host, which gives them back through
/// `tns_adapter_free`.
#[repr(C)]
pub struct TnsBuf {
    pub ptr: *mut u8,
    pub len: usize,
    pub cap: usize,
}

impl TnsBuf {
    pub const EMPTY: TnsBuf = TnsBuf { ptr: std::ptr::null_mut(), len: 0, cap: 0 };

    pub fn from_vec(v: Vec<u8>) -> TnsBuf {
        let mut v = std::mem::ManuallyDrop::new(v);
        TnsBuf { ptr: v.as_mut_ptr(), len: v.len(), cap: v.capacity() }
    }

    /// # Safety
    /// `self` must come from [`TnsBuf::from_vec`] in this same library and not be freed yet.
    pub unsafe fn into_vec(self) -> Vec<u8> {
        if self.ptr.is_null() {
            return Vec::new();
        }
        Vec::from_raw_parts(self.ptr, self.len, self.cap)
    }
}

/// The operations of [`Adapter`] by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Op {
    Describe = 0,
    Advance = 1,
    Reconcile = 2,
    VerifyCredentials = 3,
    Report = 4,
    AllowList = 5,
    Inspect = 6,
    Check = 7,
    CodeLists = 8,
    Screen = 9,
}

impl Op {
    pub fn from_u32(n: u32) -> Option<Op> {
        Some(match n {
            0 => Op::Describe,
            1 => Op::Advance,
            2 => Op::Reconcile,
            3 => Op::VerifyCredentials,
            4 => Op::Report,
            5 => Op::AllowList,
            6 => Op::Inspect,
            7 => Op::Check,
            8 => Op::CodeLists,
            9 => Op::Screen,
            _ => return None,
        })
    }
}

pub type AbiVersionFn = unsafe extern "C" fn() -> u32;
pub type CreateFn = unsafe extern "C" fn(*const u8, usize, *mut TnsBuf) -> *mut c_void;
pub type DestroyFn = unsafe extern "C" fn(*mut c_void);
pub type CallFn = unsafe extern "C" fn(*mut c_void, u32, *const u8, usize, *mut TnsBuf) -> i32;
pub type FreeFn = unsafe extern "C" fn(TnsBuf);

fn json<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_else(|e| {
        serde_json::to_vec(&AdapterError::Permanent(format!("cannot encode the answer: {e}"))).unwrap_or_default()
    })
}

fn decode<T: DeserializeOwned>(input: &[u8]) -> Result<T, AdapterError> {
    serde_json::from_slice(input)
        .map_err(|e| AdapterError::Permanent(format!("malformed request for this adapter: {e}")))
}

fn run<T: Serialize>(r: Result<T, AdapterError>) -> Result<Vec<u8>, AdapterError> {
    r.map(|v| json(&v))
}

/// Plugin side: route one call to the adapter. Public for [`export_adapter!`].
pub fn dispatch(adapter: &dyn Adapter, op: u32, input: &[u8]) -> Result<Vec<u8>, AdapterError> {
    match Op::from_u32(op) {
        Some(Op::Describe) => Ok(json(&adapter.describe())),
        Some(Op::Advance) => run(adapter.advance(&decode(input)?)),
        Some(Op::Reconcile) => run(adapter.reconcile(&decode(input)?)),
        Some(Op::VerifyCredentials) => run(adapter.verify_credentials(&decode(input)?)),
        Some(Op::Report) => run(adapter.report(&decode(input)?)),
        Some(Op::AllowList) => run(adapter.allow_list(&decode(input)?)),
        Some(Op::Inspect) => run(adapter.inspect(&decode(input)?)),
        Some(Op::Check) => run(adapter.check(&decode(input)?)),
        Some(Op::CodeLists) => run(adapter.code_lists(&decode(input)?)),
        Some(Op::Screen) => run(adapter.screen(&decode(input)?)),
        None => Err(AdapterError::Configuration(format!("this plugin does not know operation {op}"))),
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// Plugin side of `tns_adapter_create`. Public for [`export_adapter!`].
///
/// # Safety
/// `cfg` must point to `len` readable bytes (or be null with `len` 0); `err` must be writable.
pub unsafe fn create<A: Adapter + 'static>(
    make: fn(&[u8]) -> Result<A, AdapterError>,
    cfg: *const u8,
    len: usize,
    err: *mut TnsBuf,
) -> *mut c_void {
    let cfg = if cfg.is_null() { &[][..] } else { std::slice::from_raw_parts(cfg, len) };
    let made = catch_unwind(AssertUnwindSafe(|| make(cfg))).unwrap_or_else(|p| {
        Err(AdapterError::Configuration(format!("adapter panicked at creation: {}", panic_message(&*p))))
    });
    match made {
        Ok(a) => Box::into_raw(Box::new(Box::new(a) as Box<dyn Adapter>)) as *mut c_void,
        Err(e) => {
            if !err.is_null() {
                *err = TnsBuf::from_vec(json(&e));
            }
            std::ptr::null_mut()
        }
    }
}

/// Plugin side of `tns_adapter_call`. Public for [`export_adapter!`].
///
/// # Safety
/// `instance` must come from [`create`] of this library; `input` must point to `len` bytes;
/// `out` must be writable.
pub unsafe fn call(instance: *mut c_void, op: u32, input: *const u8, len: usize, out: *mut TnsBuf) -> i32 {
    if instance.is_null() || out.is_null() {
        return STATUS_ERR;
    }
    let adapter: &dyn Adapter = &**(instance as *const Box<dyn Adapter>);
    let input = if input.is_null() { &[][..] } else { std::slice::from_raw_parts(input, len) };
    let result = catch_unwind(AssertUnwindSafe(|| dispatch(adapter, op, input)))
        .unwrap_or_else(|p| Err(AdapterError::Transient(format!("adapter panicked: {}", panic_message(&*p)))));
    match result {
        Ok(bytes) => {
            *out = TnsBuf::from_vec(bytes);
            STATUS_OK
        }
        Err(e) => {
            *out = TnsBuf::from_vec(json(&e));
            STATUS_ERR
        }
    }
}

/// Plugin side of `tns_adapter_destroy`.
///
/// # Safety
/// `instance` must come from [`create`] of this library and not be used afterwards.
pub unsafe fn destroy(instance: *mut c_void) {
    if !instance.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(instance as *mut Box<dyn Adapter>))));
    }
}

/// Export an adapter from a `cdylib` in one line:
/// `tns_adapter::export_adapter!(MyAdapter::from_config);` where
/// `fn from_config(config_json: &[u8]) -> Result<MyAdapter, AdapterError>` (the JSON is a
/// [`PluginConfig`](crate::PluginConfig)).
#[macro_export]
macro_rules! export_adapter {
    ($make:path) => {
        #[no_mangle]
        pub extern "C" fn tns_adapter_abi_version() -> u32 {
            $crate::abi::ABI_VERSION
        }

        /// # Safety
        /// See `tns_adapter::abi::create`.
        #[no_mangle]
        pub unsafe extern "C" fn tns_adapter_create(
            cfg: *const u8,
            len: usize,
            err: *mut $crate::abi::TnsBuf,
        ) -> *mut ::std::ffi::c_void {
            $crate::abi::create($make, cfg, len, err)
        }

        /// # Safety
        /// See `tns_adapter::abi::destroy`.
        #[no_mangle]
        pub unsafe extern "C" fn tns_adapter_destroy(instance: *mut ::std::ffi::c_void) {
            $crate::abi::destroy(instance)
        }

        /// # Safety
        /// See `tns_adapter::abi::call`.
        #[no_mangle]
        pub unsafe extern "C" fn tns_adapter_call(
            instance: *mut ::std::ffi::c_void,
            op: u32,
            input: *const u8,
            len: usize,
            out: *mut $crate::abi::TnsBuf,
        ) -> i32 {
            $crate::abi::call(instance, op, input, len, out)
        }

        /// # Safety
        /// `buf` must come from this library and be freed once.
        #[no_mangle]
        pub unsafe extern "C" fn tns_adapter_free(buf: $crate::abi::TnsBuf) {
            drop(buf.into_vec())
        }
    };
}
