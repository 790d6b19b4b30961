//! `draughts serve`: the play page, the JSON API a game site calls, and the page of a training
//! run, from one process. Every request is answered by [`api::Service::handle`] on one of a
//! fixed number of threads (a long search does not block the others; requests beyond them wait
//! in the queue), with bounded bodies and no games kept in memory.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use tiny_http::{Header, Method, Response, Server, StatusCode};

use crate::bad_input;

pub mod api;
pub mod levels;

/// The play page (one file: no build step, nothing fetched from elsewhere).
pub const PAGE: &str = include_str!("page.html");
/// The page of a training run.
pub const RUN_PAGE: &str = include_str!("run.html");
/// The API, described for clients (OpenAPI 3.0).
pub const OPENAPI: &str = include_str!("openapi.json");

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on (loopback unless given; port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: String,
    /// The model the `network` levels use (hard). Default: models/sparse-2h when it is there.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Play with the hand-made evaluation at every level, even when a model is there.
    #[arg(long, conflicts_with = "model")]
    no_model: bool,
    /// A training run to show (its progress, and its checkpoints to play against).
    #[arg(long)]
    run: Option<PathBuf>,
    /// A levels file in place of the built-in configs/levels.toml.
    #[arg(long)]
    levels: Option<PathBuf>,
    /// Requests answered at once (each search holds one thread).
    #[arg(long, default_value_t = 8)]
    threads: usize,
    /// Endgame tables (`draughts egtb build`) for the levels with `egtb = true` (hard).
    #[arg(long)]
    egtb: Option<PathBuf>,
}

/// The model used when none is named: the shipped hard opponent, if the server runs from the
/// repository.
const DEFAULT_MODEL: &str = "models/sparse-2h";

impl Args {
    /// The model this server plays with, if any.
    pub fn models(&self) -> Vec<PathBuf> {
        self.model.iter().cloned().collect()
    }
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let levels = levels::load(a.levels.as_deref())?;
    let model_path = match (&a.model, a.no_model) {
        (Some(m), _) => Some(m.clone()),
        (None, false) if std::path::Path::new(DEFAULT_MODEL).is_dir() => Some(PathBuf::from(DEFAULT_MODEL)),
        _ => None,
    };
    let model = crate::models::load_for_alphabeta(model_path.as_deref(), "the server plays its strongest player, alpha-beta with it")?;
    if let Some(run) = &a.run {
        if !run.join("metrics.jsonl").is_file() && !run.join("checkpoints").is_dir() {
            return Err(bad_input(format!("{}: not a training run (no metrics.jsonl, no checkpoints/)", run.display())));
        }
    }
    if a.threads == 0 || a.threads > 256 {
        return Err(bad_input("--threads is 1 to 256"));
    }
    let egtb = crate::egtb::load(a.egtb.as_deref())?;
    let addr: SocketAddr = a.addr.parse().map_err(|e| bad_input(format!("--addr `{}`: {e}", a.addr)))?;
    let server = Server::from_listener(listen(addr).map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?, None)
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let bound = server.server_addr().to_ip().map_or_else(|| addr.to_string(), |a| a.to_string());
    // What the server says at start; a closed standard output (a site's supervisor that only
    // read the first line) must not stop it, so write errors are ignored.
    let mut banner = format!("listening on http://{bound}\n");
    if let Some(m) = &model_path {
        banner += &format!("model: {}\n", m.display());
    }
    if let (Some(e), Some(d)) = (&egtb, &a.egtb) {
        banner += &format!("endgame tables: up to {} pieces in {}\n", e.pieces(), d.display());
    }
    for l in &levels {
        banner += &format!("level {}: {}\n", l.name, l.summary(model.as_ref().filter(|_| l.network).map(|m| m.model_id())));
    }
    let mut out = std::io::stdout();
    let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
    if !addr.ip().is_loopback() {
        eprintln!("warning: listening on {} — reachable from other machines", addr.ip());
    }
    let service = Arc::new(api::Service::new(levels, model, a.run.clone()).with_egtb(egtb));
    let server = Arc::new(server);
    let workers: Vec<_> = (0..a.threads)
        .map(|_| {
            let server = server.clone();
            let service = service.clone();
            std::thread::spawn(move || {
                while let Ok(request) = server.recv() {
                    answer(&service, request);
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    Ok(ExitCode::SUCCESS)
}

/// A listening socket whose connections do not wait for acknowledgements before sending the
/// rest of an answer (TCP_NODELAY, inherited by accepted sockets).
fn listen(addr: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_nodelay(true)?;
    socket.bind(&addr.into())?;
    socket.listen(128)?;
    Ok(socket.into())
}

/// Reads one request (at most `api::MAX_BODY` bytes of body), answers it.
fn answer(service: &api::Service, mut request: tiny_http::Request) {
    let method = match request.method() {
        Method::Get => "GET",
        Method::Post => "POST",
        Method::Head => "HEAD",
        _ => "OTHER",
    };
    let url = request.url().to_owned();
    let too_long = request.body_length().is_some_and(|n| n > api::MAX_BODY);
    let mut body = Vec::new();
    let reply = if too_long {
        None
    } else {
        match request.as_reader().take(api::MAX_BODY as u64 + 1).read_to_end(&mut body) {
            Ok(_) if body.len() > api::MAX_BODY => None,
            Ok(_) => Some(service.handle(method, &url, &body)),
            Err(e) => Some(api::Reply::error(400, format!("reading the body: {e}"))),
        }
    };
    let reply = reply.unwrap_or_else(|| api::Reply::error(413, format!("the body is larger than {} bytes", api::MAX_BODY)));
    let mut response = Response::from_data(reply.body).with_status_code(StatusCode(reply.status));
    if let Ok(h) = Header::from_bytes(&b"Content-Type"[..], reply.content_type.as_bytes()) {
        response.add_header(h);
    }
    if let Ok(h) = Header::from_bytes(&b"Cache-Control"[..], &b"no-store"[..]) {
        response.add_header(h);
    }
    // A client that went away is not the server's problem.
    let _ = request.respond(response);
}
