//! `uetds-sim`: runs the fake U-ETDS on an address so a person can point a running TNS at it.
//!
//! ```sh
//! cargo run -p tns-uetds-fake --bin uetds-sim -- --addr 127.0.0.1:8099 --account 123456:secret
//! ```
//!
//! Prints `listening on http://ADDR` once it accepts connections, logs every request and every
//! violation to stderr, and on Ctrl-C prints how many requests and violations it saw.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use tns_uetds_fake::FakeUetds;

const USAGE: &str =
    "usage: uetds-sim [--addr HOST:PORT] [--account USER:PASSWORD]... [--latency-ms N] [--no-xsd] [--quiet]
  --addr        listen address (default 127.0.0.1:8099; port 0 picks a free one)
  --account     another firm account besides the test account 999999 / 999999testtest
  --latency-ms  delay added to every answer
  --no-xsd      skip the xmllint schema validation (the structural check stays)
  --quiet       do not log requests";

struct Args {
    addr: SocketAddr,
    accounts: Vec<(String, String)>,
    latency: Duration,
    xsd: bool,
    log: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        addr: SocketAddr::from(([127, 0, 0, 1], 8099)),
        accounts: Vec::new(),
        latency: Duration::ZERO,
        xsd: true,
        log: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--addr" => args.addr = value("--addr")?.parse().map_err(|e| format!("--addr: {e}"))?,
            "--account" => {
                let v = value("--account")?;
                let (u, p) = v.split_once(':').ok_or("--account is USER:PASSWORD")?;
                args.accounts.push((u.to_string(), p.to_string()));
            }
            "--latency-ms" => {
                let ms: u64 = value("--latency-ms")?.parse().map_err(|e| format!("--latency-ms: {e}"))?;
                args.latency = Duration::from_millis(ms);
            }
            "--no-xsd" => args.xsd = false,
            "--quiet" => args.log = false,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("uetds-sim: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let fake = match FakeUetds::start_on(args.addr).await {
        Ok(f) => f,
        Err(e) => {
            eprintln!("uetds-sim: cannot listen on {}: {e}", args.addr);
            return ExitCode::FAILURE;
        }
    };
    for (u, p) in &args.accounts {
        fake.add_account(u, p);
    }
    fake.set_latency(args.latency);
    fake.set_validate_xsd(args.xsd);
    fake.set_log(args.log);
    println!("listening on {}", fake.base_url());
    let _ = tokio::signal::ctrl_c().await;
    let violations = fake.violations();
    eprintln!("uetds-sim: {} request(s), {} violation(s)", fake.requests().len(), violations.len());
    for v in &violations {
        eprintln!("  {v}");
    }
    ExitCode::SUCCESS
}
