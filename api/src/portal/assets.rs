//! The portal's static files, compiled into the binary (no build step, no CDN): its style
//! sheet, its small script, and htmx (vendored: `api/assets/vendor/`, version and licence in
//! `api/assets/README.md`). Each is served under a name carrying a hash of its content, so
//! browsers may keep it for a year and still never run a stale one.

use std::sync::OnceLock;

use axum::{
    extract::Path,
    http::{header, HeaderValue, StatusCode},
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
}

impl Asset {
    const fn new(stem: &'static str, ext: &'static str, mime: &'static str, body: &'static [u8]) -> Asset {
        Asset { stem, ext, mime, body, path: OnceLock::new() }
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
pub async fn serve(Path(name): Path<String>) -> Response {
    let wanted = format!("/assets/{name}");
    let Some(asset) = ALL.iter().find(|a| a.path() == wanted) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let mut res = asset.body.into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.mime));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    res
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
}
