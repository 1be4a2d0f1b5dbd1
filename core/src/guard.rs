//! The SSRF guard: a hosted platform must not be a proxy into its own network. Endpoint URLs
//! must be https (or http, where the operator allows it) with a host; an address that is
//! loopback, private, link-local or otherwise not on the public internet is refused when a
//! subscription is created and again on every delivery (the delivery client resolves names
//! through a resolver that applies [`is_public`], so the address checked is the address connected to, whatever
//! DNS says by then). Operators may allow internal addresses (`TNS_WEBHOOK_ALLOW_PRIVATE`) and
//! plain http (`TNS_WEBHOOK_ALLOW_HTTP`), both on in `tns dev`.
//!
//! What a refusal says never names the address a host resolved to: the subscriber learns
//! that the endpoint is not allowed, not what our resolver sees inside the network.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use url::Url;

use crate::env::{ConfigError, Profile, Vars};

pub const MAX_URL_LEN: usize = 2048;

/// What the operator allows besides public https endpoints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// Loopback, private, link-local and other internal addresses.
    pub allow_private: bool,
    /// Plain `http://` endpoints (bodies and signatures readable on the way).
    pub allow_http: bool,
}

impl Policy {
    /// Everything allowed (tests, `tns dev`).
    pub const OPEN: Policy = Policy { allow_private: true, allow_http: true };

    /// `TNS_WEBHOOK_ALLOW_PRIVATE` and `TNS_WEBHOOK_ALLOW_HTTP`, both on in `tns dev` only.
    pub fn from_vars(vars: &Vars<'_>, profile: Profile) -> Result<Policy, ConfigError> {
        Ok(Policy {
            allow_private: vars.parse_bool("TNS_WEBHOOK_ALLOW_PRIVATE", profile.is_dev())?,
            allow_http: vars.parse_bool("TNS_WEBHOOK_ALLOW_HTTP", profile.is_dev())?,
        })
    }
}

/// What a refusal of an internal address says, whichever address it was.
pub const NOT_ALLOWED: &str = "is not allowed: deliveries go to public addresses only";

/// What a refusal of plain http says.
pub const HTTPS_REQUIRED: &str = "must be an https URL: plain http is not allowed here";

/// Why an endpoint URL is not accepted; the text is shown to the subscriber.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Parse an endpoint URL: https (or http if allowed), a host, no credentials, and, unless
/// internal addresses are allowed, not an internal address literal. Names are checked by
/// [`check_resolves`].
pub fn parse_endpoint(raw: &str, policy: Policy) -> Result<Url, Refused> {
    if raw.len() > MAX_URL_LEN {
        return Err(Refused(format!("must be at most {MAX_URL_LEN} characters")));
    }
    let url = Url::parse(raw).map_err(|e| Refused(format!("is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refused("must be an http or https URL".into()));
    }
    if url.scheme() == "http" && !policy.allow_http {
        return Err(Refused(HTTPS_REQUIRED.into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refused("must not carry credentials; use the signature to authenticate deliveries".into()));
    }
    let host = url.host().ok_or_else(|| Refused("has no host".into()))?;
    if !policy.allow_private {
        let literal = match host {
            url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
            url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
            url::Host::Domain(_) => None,
        };
        if let Some(ip) = literal {
            check_ip(ip)?;
        }
    }
    Ok(url)
}

/// Resolve the URL's host now and refuse it if any address is internal.
pub async fn check_resolves(url: &Url, policy: Policy) -> Result<(), Refused> {
    if policy.allow_private {
        return Ok(());
    }
    let Some(url::Host::Domain(name)) = url.host() else { return Ok(()) };
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name, 0))
        .await
        .map_err(|_| Refused(format!("host `{name}` does not resolve")))?
        .collect();
    if addrs.is_empty() {
        return Err(Refused(format!("host `{name}` does not resolve")));
    }
    addrs.iter().try_for_each(|a| check_ip(a.ip()))
}

pub fn check_ip(ip: IpAddr) -> Result<(), Refused> {
    if is_public(ip) {
        Ok(())
    } else {
        Err(Refused(NOT_ALLOWED.into()))
    }
}

/// Whether an address is on the public internet (not loopback, private, link-local, shared,
/// multicast, reserved, documentation, …); IPv4 embedded in IPv6 is judged as IPv4.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let s = v6.segments();
            let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
            // NAT64 (64:ff9b::/96) and IPv4-translated (::ffff:0:0/96) addresses carry an IPv4
            // address in their last 32 bits, 6to4 (2002::/16) in the 32 after the prefix: a
            // gateway or relay would take the connection there.
            if (s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0]) || s[..6] == [0, 0, 0, 0, 0xffff, 0] {
                return is_public_v4(v4(s[6], s[7]));
            }
            if s[0] == 0x2002 {
                return is_public_v4(v4(s[1], s[2]));
            }
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated) fec0::/10
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) // local-use NAT64 64:ff9b:1::/48
                || (s[0] == 0x2001 && s[1] == 0) // Teredo 2001::/32: tunnels to any IPv4 address
                || (s[0] == 0x2001 && s[1] == 2 && s[2] == 0) // benchmarking 2001:2::/48
                || (s[0] == 0x0100 && s[1..4] == [0, 0, 0]) // discard 100::/64
                || s[..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible (deprecated) ::/96
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0 // "this network"
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // shared address space (carrier NAT)
        || (a == 169 && b == 254) // link-local, cloud metadata
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // documentation
        || (a == 192 && b == 168)
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // documentation
        || (a == 203 && b == 0 && c == 113) // documentation
        || a >= 224) // multicast, reserved, broadcast
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:0:a00:1",      // IPv4-translated 10.0.0.1
            "64:ff9b::a9fe:a9fe",  // NAT64 of 169.254.169.254
            "64:ff9b:1::808:808",  // local-use NAT64, whatever it embeds
            "2002:a00:1::1",       // 6to4 of 10.0.0.1
            "2002:7f00:1::",       // 6to4 of 127.0.0.1
            "2002:a9fe:a9fe::1",   // 6to4 of 169.254.169.254
            "2001:0:4136:e378::1", // Teredo
            "2001::ffff:ffff",     // Teredo
            "2001:2::1",           // benchmarking
            "2001:db8::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808", // NAT64 of 8.8.8.8
            "2002:808:808::1",  // 6to4 of 8.8.8.8
            "2001:4860:4860::8888",
        ] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn endpoint_urls() {
        let strict = Policy::default();
        let private = Policy { allow_private: true, allow_http: false };
        assert!(parse_endpoint("https://hooks.example.com/tns", strict).is_ok());
        assert!(parse_endpoint("http://127.0.0.1:9000/x", Policy::OPEN).is_ok(), "allowed by the operator");
        assert!(parse_endpoint("https://127.0.0.1:9000/x", private).is_ok());
        for bad in [
            "ftp://example.com/",
            "file:///etc/passwd",
            "not a url",
            "https://127.0.0.1/",
            "https://[::1]:8080/",
            "https://[2002:a00:1::1]/",
            "https://169.254.169.254/latest/meta-data",
            "https://0x7f000001/",
            "https://user:pw@example.com/",
        ] {
            assert!(parse_endpoint(bad, strict).is_err(), "{bad}");
        }
        assert!(parse_endpoint(&format!("https://e.com/{}", "a".repeat(MAX_URL_LEN)), Policy::OPEN).is_err());
    }

    #[test]
    fn plain_http_only_where_allowed() {
        for policy in [Policy::default(), Policy { allow_private: true, allow_http: false }] {
            assert_eq!(parse_endpoint("http://hooks.example.com/tns", policy), Err(Refused(HTTPS_REQUIRED.into())));
        }
        assert!(
            parse_endpoint("http://hooks.example.com/tns", Policy { allow_private: false, allow_http: true }).is_ok()
        );
    }

    #[test]
    fn refusals_do_not_name_the_address() {
        for ip in ["10.1.2.3", "::1", "2002:a00:1::1"] {
            let e = check_ip(ip.parse().unwrap()).unwrap_err();
            assert!(!e.0.contains(ip) && e.0.contains("not allowed"), "{e}");
        }
    }
}
