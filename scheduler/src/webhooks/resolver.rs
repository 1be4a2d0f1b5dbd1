//! The delivery client's DNS resolver: the system resolver behind the SSRF guard
//! ([`tns_core::guard`]), so the address checked is the address connected to.

use std::{
    future::Future,
    net::SocketAddr,
    pin::Pin,
    task::{Context, Poll},
};

use hyper_util::client::legacy::connect::dns::Name;
use tns_core::guard::{is_public, Refused, NOT_ALLOWED};

/// The delivery client's resolver: the system resolver, with internal addresses removed
/// (unless allowed). A name left with no address fails the delivery as `refused`; a name that
/// does not resolve fails it with [`Unresolved`].
#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver {
    pub allow_private: bool,
}

/// The endpoint's host name did not resolve (the resolver's own words are not kept: they
/// describe our network, not the subscriber's endpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unresolved;

impl std::fmt::Display for Unresolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the host name does not resolve")
    }
}

impl std::error::Error for Unresolved {}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl tower_service::Service<Name> for GuardedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let all: Vec<SocketAddr> = match tokio::net::lookup_host((name.as_str(), 0)).await {
                Ok(addrs) => addrs.collect(),
                Err(_) => return Err(Box::new(Unresolved) as BoxError),
            };
            if all.is_empty() {
                return Err(Box::new(Unresolved) as BoxError);
            }
            let allowed: Vec<SocketAddr> = all.into_iter().filter(|a| allow_private || is_public(a.ip())).collect();
            if allowed.is_empty() {
                return Err(Box::new(Refused(NOT_ALLOWED.into())) as BoxError);
            }
            Ok(allowed.into_iter())
        })
    }
}
