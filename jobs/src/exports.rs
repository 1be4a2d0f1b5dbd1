//! Builds the data exports owners ask for (KVKK): a ZIP with, for each part of what TNS holds
//! about the organization, `<part>.json` (an array of its rows) and `<part>.csv` (a column per
//! field, nested values as JSON), plus `README.txt` saying what is in it. Kept 7 days, then
//! dropped.

use std::{
    collections::BTreeSet,
    io::{Cursor, Seek, SeekFrom, Write},
    time::Duration,
};
use tns_core::ids::OrgId;

use futures::TryStreamExt;
use serde_json::Value;
use sqlx::PgPool;
use tns_store::exports::{self as store, Part, PARTS};
use zip::{write::SimpleFileOptions, CompressionMethod, ZipWriter};

/// How long an archive is kept once ready.
pub const KEEP: Duration = Duration::from_secs(7 * 86_400);
/// Longest a build may hold its export before another leader may take it over.
const LEASE: Duration = Duration::from_secs(3600);
/// The largest archive kept (compressed, about ten times as much data): it is built in memory
/// and served whole, so this bounds what one export costs the jobs and API processes. An
/// organization beyond it is told to ask support.
const MAX_ARCHIVE: usize = 64 * 1024 * 1024;
/// Builds of one export started at most (a build that kills its process is not retried forever).
const MAX_ATTEMPTS: i32 = 3;

/// Build every pending export (one at a time), then drop the expired archives; how many
/// exports were built or dropped.
pub async fn run(db: &PgPool) -> anyhow::Result<u64> {
    let mut done = store::expire(db).await?;
    while let Some((id, org, attempts)) = store::claim(db, LEASE).await? {
        if attempts > MAX_ATTEMPTS {
            tracing::error!(
                export = id.get(),
                org = org.get(),
                "data export abandoned after {MAX_ATTEMPTS} builds that did not finish"
            );
            store::fail(db, id, "the export could not be built; ask support to look at it").await?;
            done += 1;
            continue;
        }
        match build(db, org).await {
            Ok(archive) => store::finish(db, id, &archive, KEEP).await?,
            Err(e) => {
                // What failed is ours to fix, and its words may quote data: the log has it, the
                // organization gets a plain reason.
                tracing::error!(export = id.get(), org = org.get(), error = %format!("{e:#}"), "data export failed");
                store::fail(db, id, "the export could not be built; ask support to look at it").await?;
            }
        }
        done += 1;
    }
    Ok(done)
}

/// The archive of everything `org` has.
pub async fn build(db: &PgPool, org: OrgId) -> anyhow::Result<Vec<u8>> {
    let mut zip = ZipWriter::new(Capped(Cursor::new(Vec::new())));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    zip.start_file("README.txt", options)?;
    zip.write_all(readme().as_bytes())?;
    for part in PARTS {
        zip.start_file(format!("{}.json", part.name), options)?;
        let columns = write_json(db, org, part, &mut zip).await?;
        zip.start_file(format!("{}.csv", part.name), options)?;
        write_csv(db, org, part, &columns, &mut zip).await?;
    }
    Ok(zip.finish()?.0.into_inner())
}

/// The archive in memory, refusing to grow past [`MAX_ARCHIVE`] (checked on every write, so a
/// part of millions of rows fails when the limit is reached, not after).
struct Capped(Cursor<Vec<u8>>);

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.get_ref().len() + buf.len() > MAX_ARCHIVE {
            return Err(std::io::Error::other(format!("the archive would pass {MAX_ARCHIVE} bytes")));
        }
        self.0.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl Seek for Capped {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.0.seek(pos)
    }
}

/// The part's rows as one JSON array; the fields its rows have (the CSV's columns).
async fn write_json(db: &PgPool, org: OrgId, part: &Part, out: &mut impl Write) -> anyhow::Result<Vec<String>> {
    let mut columns = BTreeSet::new();
    let mut rows = store::rows(db, org, part);
    out.write_all(b"[")?;
    let mut first = true;
    while let Some(row) = rows.try_next().await? {
        if let Value::Object(fields) = &row {
            columns.extend(fields.keys().cloned());
        }
        out.write_all(if first { b"\n" } else { b",\n" })?;
        serde_json::to_writer(&mut *out, &row)?;
        first = false;
    }
    out.write_all(b"\n]\n")?;
    Ok(columns.into_iter().collect())
}

/// The part's rows as CSV (RFC 4180), read a second time so no part is held in memory.
async fn write_csv(
    db: &PgPool,
    org: OrgId,
    part: &Part,
    columns: &[String],
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let header: Vec<String> = columns.iter().map(|c| csv_field(c)).collect();
    out.write_all(header.join(",").as_bytes())?;
    out.write_all(b"\r\n")?;
    let mut rows = store::rows(db, org, part);
    while let Some(row) = rows.try_next().await? {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| match row.get(c) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => csv_field(s),
                Some(other) => csv_field(&other.to_string()),
            })
            .collect();
        out.write_all(cells.join(",").as_bytes())?;
        out.write_all(b"\r\n")?;
    }
    Ok(())
}

/// A CSV cell: quoted when it holds a comma, a quote or a line break (quotes doubled). A cell
/// a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or a carriage return first)
/// is prefixed with `'`.
fn csv_field(s: &str) -> String {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']) && s.parse::<f64>().is_err();
    let s = if formula { format!("'{s}") } else { s.to_string() };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

fn readme() -> String {
    let mut s = String::from(
        "Everything TNS holds about your organization, as it was when this archive was made.\n\
         Each part is here twice: <part>.json (an array of its rows) and <part>.csv (the same rows,\n\
         one column per field; nested values as JSON). Left out: secrets and their hashes\n\
         (passwords, API key and token hashes, your U-ETDS password, webhook signing secrets)\n\
         and queue bookkeeping. This archive holds personal data in the clear: keep it safe.\n\nParts:\n",
    );
    for part in PARTS {
        s.push_str(&format!("- {}\n", part.name));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_cells_are_quoted_when_needed_and_never_formulas() {
        assert_eq!(csv_field("Ali"), "Ali");
        assert_eq!(csv_field("Kaya, Ali"), "\"Kaya, Ali\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("-12.5"), "-12.5");
        assert_eq!(csv_field("+90 532"), "'+90 532");
        assert_eq!(csv_field("\tcmd"), "'\tcmd");
    }
}
