//! The API's HTTP server: axum's router on hyper, with what a public listener needs that
//! `axum::serve` does not do: a deadline for a request's headers (a client trickling them, or
//! idling between requests, is cut off), a cap on open connections, and a graceful stop that
//! lets requests in flight finish.

use std::{future::Future, net::SocketAddr, sync::Arc, time::Duration};

use axum::{body::Body, extract::ConnectInfo, Router};
use hyper::{body::Incoming, Request};
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::conn::auto::Builder,
    service::TowerToHyperService,
};
use tokio::{net::TcpListener, sync::watch, sync::Semaphore};
use tower::ServiceExt;

/// How the listener treats its clients.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// From the connection's start, or the end of its last response, to the end of the next
    /// request's headers.
    pub header_read_timeout: Duration,
    /// Connections open at once; more wait to be accepted.
    pub max_connections: usize,
}

/// Serve `app` on `listener` until `shutdown` resolves, then stop accepting and wait for the
/// open connections to finish their requests.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every connection holds a receiver; when all are dropped, every connection has ended.
    let (done_tx, done_rx) = watch::channel(());
    let mut builder = Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
    let builder = Arc::new(builder);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = slots.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            _ = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of file descriptors and the like: wait a moment rather than spin.
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let service = app.clone().map_request(move |req: Request<Incoming>| {
            let mut req = req.map(Body::new);
            req.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
            req
        });
        let (builder, mut stop, done) = (builder.clone(), stop_rx.clone(), done_rx.clone());
        tokio::spawn(async move {
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(service));
            tokio::pin!(conn);
            let stopped = async move {
                let _ = stop.wait_for(|s| *s).await;
            };
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stopped => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.as_mut().await;
                }
            }
            drop((permit, done));
        });
    }
    drop(listener);
    stop_tx.send(true).ok();
    drop(done_rx);
    done_tx.closed().await;
    Ok(())
}
