//! The portal's static files, compiled into the binary (no build step, no CDN): its style
//! sheet, its small script, and htmx (vendored: `api/assets/vendor/`, version and licence in
//! `api/assets/README.md`). Each is served under a name carrying a hash of its content, so
//! browsers may keep it for a year and still never run a stale one. Each is gzip-compressed
//! once, for browsers that accept it (pages themselves are not: they carry the CSRF token and
//! reflect what was typed, which compression would let another site guess at by size).

use std::sync::OnceLock;

use axum::{
    extract::Path,
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use sha2::{Digest, Sha256};

/// One file.
pub struct Asset {
    stem: &'static str,
    ext: &'static str,
    mime: &'static str,
    body: &'static [u8],
    path: OnceLock<String>,
    gzipped: OnceLock<Vec<u8>>,
}

impl Asset {
    const fn new(stem: &'static str, ext: &'static str, mime: &'static str, body: &'static [u8]) -> Asset {
        Asset { stem, ext, mime, body, path: OnceLock::new(), gzipped: OnceLock::new() }
    }

    /// The body gzip-compressed (once; the files are small and fixed).
    fn gzipped(&self) -> &[u8] {
        self.gzipped.get_or_init(|| {
            use std::io::Write;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            gz.write_all(self.body).expect("writing to memory");
            gz.finish().expect("writing to memory")
        })
    }

    /// `/assets/<stem>-<hash>.<ext>`.
    pub fn path(&self) -> &str {
        self.path.get_or_init(|| {
            let hash = hex::encode(&Sha256::digest(self.body)[..6]);
            format!("/assets/{}-{hash}.{}", self.stem, self.ext)
        })
    }
}

pub static STYLE: Asset =
    Asset::new("portal", "css", "text/css; charset=utf-8", include_bytes!("../../assets/portal.css"));
pub static SCRIPT: Asset =
    Asset::new("portal", "js", "text/javascript; charset=utf-8", include_bytes!("../../assets/portal.js"));
pub static HTMX: Asset = Asset::new(
    "htmx-2.0.11",
    "js",
    "text/javascript; charset=utf-8",
    include_bytes!("../../assets/vendor/htmx-2.0.11.min.js"),
);

const ALL: [&Asset; 3] = [&STYLE, &SCRIPT, &HTMX];

/// `GET /assets/{name}`: a file by its hashed name; any other name is a 404.
pub async fn serve(Path(name): Path<String>, headers: HeaderMap) -> Response {
    let wanted = format!("/assets/{name}");
    let Some(asset) = ALL.iter().find(|a| a.path() == wanted) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let gzip = accepts_gzip(&headers);
    let mut res = if gzip { asset.gzipped().into_response() } else { asset.body.into_response() };
    let h = res.headers_mut();
    if gzip {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.mime));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    res
}

/// Whether `Accept-Encoding` takes gzip (not refused with `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(
        |coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let refused =
                parts.any(|p| p.replace(' ', "").strip_prefix("q=").and_then(|q| q.parse::<f32>().ok()) == Some(0.0));
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_content_hash() {
        assert!(STYLE.path().starts_with("/assets/portal-") && STYLE.path().ends_with(".css"));
        assert_ne!(STYLE.path(), SCRIPT.path());
        assert!(HTMX.path().starts_with("/assets/htmx-2.0.11-"));
    }

    #[test]
    fn gzip_when_accepted_and_the_same_bytes_once_inflated() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
            accepts_gzip(&h)
        };
        assert!(with("gzip, deflate, br, zstd") && with("br;q=1.0, gzip;q=0.5") && with("*"));
        assert!(!with("br") && !with("gzip;q=0") && !with("gzip; q=0.0") && !accepts_gzip(&HeaderMap::new()));
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(HTMX.gzipped()), &mut out).unwrap();
        assert_eq!(out, HTMX.body);
        assert!(HTMX.gzipped().len() * 2 < HTMX.body.len(), "htmx compresses well");
    }
}
