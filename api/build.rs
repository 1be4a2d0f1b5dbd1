// `sqlx::migrate!` embeds migrations/ at compile time; without this, a new migration file
// would not reach an incrementally built binary (see the sqlx `migrate!` documentation).
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
