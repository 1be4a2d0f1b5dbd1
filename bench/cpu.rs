//! CPU time of this process and of the local PostgreSQL, from /proc, for the benchmarks that
//! report where a phase's time went.

/// CPU seconds used so far by this process and by the local PostgreSQL's processes (read from
/// /proc; `None` where that is not possible), to show where a phase's time went.
pub(crate) fn cpu_seconds() -> (Option<f64>, Option<f64>) {
    fn ticks(stat: &str) -> Option<u64> {
        // Fields after the command name: utime and stime are the 12th and 13th.
        let rest = stat.get(stat.rfind(')')? + 2..)?;
        let f: Vec<&str> = rest.split_whitespace().collect();
        Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
    }
    const HZ: f64 = 100.0; // USER_HZ on Linux
    let own = std::fs::read_to_string("/proc/self/stat").ok().and_then(|s| ticks(&s)).map(|t| t as f64 / HZ);
    let pg = std::fs::read_dir("/proc").ok().map(|dir| {
        dir.filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("stat")).ok())
            .filter(|s| s.contains("(postgres)"))
            .filter_map(|s| ticks(&s))
            .sum::<u64>() as f64
            / HZ
    });
    (own, pg)
}
