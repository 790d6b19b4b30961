//! The HTTP layer of `draughts serve`: hyper's HTTP/1 server on a small tokio runtime around
//! [`Service`], which stays a plain function from a request to a reply (tested without a socket).
//!
//! What it promises (tests/serve.rs checks each on loopback):
//! - A request whose client goes away (closes its connection, or the page aborts its fetch) is
//!   dropped by hyper, and a guard it owned raises its search's stop flag: the search ends at its
//!   next look at the flag and its thread is free at once.
//! - Searches (`POST /api/move`, `POST /api/analyse`) run on at most `searches` threads; a request
//!   waits at most [`QUEUE_TIMEOUT`] for one, then is answered 503.
//! - A client has [`Policy::client_timeout`] to send a request's headers (an idle keep-alive
//!   connection is closed after it too) and as long again for its body, of at most
//!   [`api::MAX_BODY`] bytes; at most [`Policy::max_connections`] connections are open at once
//!   (more wait in the listen backlog). A slow or flooding client therefore holds no search
//!   thread, and memory only within those bounds.
//! - An analysis streams as server-sent events while it searches; a reader that falls behind
//!   misses intermediate `info` events (the next one supersedes them), never the last one.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::header::HeaderValue;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

use super::api::{self, Reply, Service};

/// Time a search request waits for a free search thread before it is answered 503.
pub const QUEUE_TIMEOUT: Duration = Duration::from_secs(30);

/// The server's bounds (`draughts serve --threads`, `--client-timeout-ms`, `--max-connections`).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Policy {
    /// Searches at once.
    pub searches: usize,
    /// Time a client has to send a request's headers (and an idle connection its next request),
    /// and again its body.
    #[serde(rename = "client_timeout_ms", serialize_with = "millis")]
    pub client_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
    /// Time a search request waits for a thread.
    #[serde(rename = "queue_timeout_ms", serialize_with = "millis")]
    pub queue_timeout: Duration,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}
/// Analysis events a slow reader may leave unread (beyond them new `info` events are dropped).
const EVENT_BUFFER: usize = 32;
/// How long the last event of an analysis waits for room when the reader has fallen behind.
const LAST_EVENT_WAIT: Duration = Duration::from_secs(5);

type ResponseBody = BoxBody<Bytes, Infallible>;

struct Shared {
    service: Arc<Service>,
    searches: Arc<Semaphore>,
    policy: Policy,
}

/// Raises a search's stop flag when dropped: hyper drops the request of a client that went away,
/// and with it this guard.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Serves `service` on `listener` until the process ends, within `policy`.
pub fn serve(listener: std::net::TcpListener, service: Arc<Service>, policy: Policy) -> std::io::Result<()> {
    let searches = policy.searches;
    // Two threads for the connections (they only parse and copy); searches run on the blocking
    // pool, which has room for every search plus the quick requests beside them.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(searches + 16)
        .thread_name("serve")
        .enable_io()
        .enable_time()
        .build()?;
    let shared = Arc::new(Shared { service, searches: Arc::new(Semaphore::new(searches)), policy });
    runtime.block_on(accept(listener, shared))
}

async fn accept(listener: std::net::TcpListener, shared: Arc<Shared>) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let connections = Arc::new(Semaphore::new(shared.policy.max_connections));
    loop {
        let permit = connections.clone().acquire_owned().await.expect("the semaphore is never closed");
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, for example: the connections open now end in time.
                eprintln!("warning: accepting a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // Without it a keep-alive client waits 40 ms for every answer longer than one write.
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let timeout = shared.policy.client_timeout;
            let service = service_fn(move |request| respond(shared.clone(), request));
            // A client that breaks the protocol or goes away is not the server's problem.
            let _ = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(timeout)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn respond(shared: Arc<Shared>, request: Request<Incoming>) -> Result<Response<ResponseBody>, Infallible> {
    let method = match *request.method() {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::HEAD => "HEAD",
        _ => "OTHER",
    };
    let url = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let body = match read_body(request, shared.policy.client_timeout).await {
        Ok(b) => b,
        Err(reply) => return Ok(whole(reply)),
    };
    let path = url.split_once('?').map_or(url.as_str(), |(p, _)| p);
    let analysis = method == "POST" && path == "/api/analyse";
    let permit = if analysis || (method == "POST" && path == "/api/move") {
        match tokio::time::timeout(shared.policy.queue_timeout, shared.searches.clone().acquire_owned()).await {
            Ok(Ok(p)) => Some(p),
            _ => {
                let message = format!(
                    "every search thread is busy ({} searches at once) and none was free within {} s: try again",
                    shared.policy.searches,
                    shared.policy.queue_timeout.as_secs()
                );
                return Ok(whole(Reply::error(503, message)));
            }
        }
    } else {
        None
    };
    let stop = Arc::new(AtomicBool::new(false));
    let guard = StopOnDrop(stop.clone());
    if analysis {
        return Ok(analyse(shared, body, stop, guard, permit).await);
    }
    let service = shared.service.clone();
    let reply = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        service.handle_until(method, &url, &body, &stop)
    })
    .await
    .unwrap_or_else(|e| Reply::error(500, format!("the request failed: {e}")));
    drop(guard);
    Ok(whole(reply))
}

/// The request's body: at most [`api::MAX_BODY`] bytes (413), within `timeout` (408).
async fn read_body(request: Request<Incoming>, timeout: Duration) -> Result<Vec<u8>, Reply> {
    let too_long = || Reply::error(413, format!("the body is larger than {} bytes", api::MAX_BODY));
    let declared = request.headers().get(hyper::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > api::MAX_BODY as u64) {
        return Err(too_long());
    }
    match tokio::time::timeout(timeout, Limited::new(request.into_body(), api::MAX_BODY).collect()).await {
        Err(_) => Err(Reply::error(408, format!("the body did not arrive within {} ms", timeout.as_millis()))),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_long()),
        Ok(Err(e)) => Err(Reply::error(400, format!("reading the body: {e}"))),
        Ok(Ok(collected)) => Ok(collected.to_bytes().to_vec()),
    }
}

fn whole(reply: Reply) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(reply.body)).boxed());
    *response.status_mut() = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    headers(&mut response, reply.content_type);
    response
}

fn headers(response: &mut Response<ResponseBody>, content_type: &'static str) {
    let h = response.headers_mut();
    h.insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(hyper::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// `POST /api/analyse`: bad input is answered as a whole (400); otherwise the events stream as
/// the search finds them, until it ends or the client goes away.
async fn analyse(
    shared: Arc<Shared>,
    body: Vec<u8>,
    stop: Arc<AtomicBool>,
    guard: StopOnDrop,
    permit: Option<OwnedSemaphorePermit>,
) -> Response<ResponseBody> {
    let (tx, mut rx) = mpsc::channel::<Result<String, Reply>>(EVENT_BUFFER);
    let service = shared.service.clone();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let result = service.analyse(&body, &stop, &mut |name, data| {
            let event = api::sse(name, &data);
            if name == "done" {
                return send_last(&tx, event);
            }
            match tx.try_send(Ok(event)) {
                Ok(()) | Err(TrySendError::Full(_)) => true,
                Err(TrySendError::Closed(_)) => false,
            }
        });
        if let Err(reply) = result {
            let _ = tx.try_send(Err(reply));
        }
    });
    match rx.recv().await {
        Some(Ok(first)) => {
            let events = Events { first: Some(Bytes::from(first)), rx, _stop: guard };
            let mut response = Response::new(events.boxed());
            headers(&mut response, "text/event-stream");
            // Proxies (nginx) should pass the events on as they come.
            response.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
            response
        }
        Some(Err(reply)) => whole(reply),
        None => whole(Reply::error(500, "the analysis ended before it started")),
    }
}

/// The last event waits a little for a reader that has fallen behind.
fn send_last(tx: &mpsc::Sender<Result<String, Reply>>, event: String) -> bool {
    let deadline = std::time::Instant::now() + LAST_EVENT_WAIT;
    let mut event = Ok(event);
    loop {
        match tx.try_send(event) {
            Ok(()) => return true,
            Err(TrySendError::Closed(_)) => return false,
            Err(TrySendError::Full(e)) if std::time::Instant::now() < deadline => {
                event = e;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(TrySendError::Full(_)) => return false,
        }
    }
}

/// The body of an analysis: its events as they come. Dropping it (the client went away) stops
/// the search.
struct Events {
    first: Option<Bytes>,
    rx: mpsc::Receiver<Result<String, Reply>>,
    _stop: StopOnDrop,
}

impl Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if let Some(first) = this.first.take() {
            return Poll::Ready(Some(Ok(Frame::data(first))));
        }
        match this.rx.poll_recv(cx) {
            Poll::Ready(Some(Ok(event))) => Poll::Ready(Some(Ok(Frame::data(Bytes::from(event))))),
            Poll::Ready(Some(Err(_)) | None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}
