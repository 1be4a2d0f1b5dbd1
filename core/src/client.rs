//! Who a client is, for the per-client limits of the tenant API and the admin API alike.

use std::net::IpAddr;

/// An IPv4-mapped IPv6 address is the IPv4 client it maps.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

/// The key a client is counted under: its IPv4 address, or its IPv6 /64 (one subscriber's
/// network: an attacker owns every address in it).
pub fn client_key(ip: IpAddr) -> String {
    match canonical(ip) {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_addresses_or_ipv6_networks() {
        assert_eq!(client_key("203.0.113.7".parse().unwrap()), "203.0.113.7");
        assert_eq!(client_key("::ffff:203.0.113.7".parse().unwrap()), "203.0.113.7");
        let a = client_key("2001:db8:1:2:aaaa::1".parse().unwrap());
        assert_eq!(a, client_key("2001:db8:1:2:ffff:1:2:3".parse().unwrap()), "one /64, one client");
        assert_ne!(a, client_key("2001:db8:1:3::1".parse().unwrap()));
    }
}
