//! `draughts serve`: the play page, the JSON API a game site calls, and the page of a training
//! run, from one process. Every request is answered by [`api::Service`] (a plain function of the
//! request, no games kept in memory); [`http`] is the HTTP layer around it: searches on a fixed
//! number of threads, stopped when their client goes away, bounded bodies, time-outs.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::bad_input;

pub mod api;
pub mod http;
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
    /// The model the `network` levels use (hard). Default: models/sparse-pat32-g2 when it is there.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Play with the hand-made evaluation at every level, even when a model is there.
    #[arg(long, conflicts_with = "model")]
    no_model: bool,
    /// A training run to show (its progress, and its checkpoints to play against).
    #[arg(long)]
    run: Option<PathBuf>,
    /// Time a client has to send a request's headers (an idle connection to send its next
    /// request), and as long again its body: a slow client is cut off after it.
    #[arg(long, default_value_t = 10_000)]
    client_timeout_ms: u64,
    /// Connections open at once (more wait in the listen backlog).
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
    /// A levels file in place of the built-in configs/levels.toml.
    #[arg(long)]
    levels: Option<PathBuf>,
    /// Searches at once (moves and analyses; each holds one thread). Other requests are answered
    /// beside them.
    #[arg(long, default_value_t = 8)]
    threads: usize,
    /// Endgame tables (`draughts egtb build`) for the levels with `egtb = true` (hard).
    #[arg(long)]
    egtb: Option<PathBuf>,
}

/// The model used when none is named: the shipped hard opponent, if the server runs from the
/// repository.
pub const DEFAULT_MODEL: &str = "models/sparse-pat32-g2";

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
    if a.client_timeout_ms == 0 {
        return Err(bad_input("--client-timeout-ms is at least 1"));
    }
    if a.max_connections == 0 || a.max_connections > 100_000 {
        return Err(bad_input("--max-connections is 1 to 100000"));
    }
    let policy = http::Policy {
        searches: a.threads,
        client_timeout: std::time::Duration::from_millis(a.client_timeout_ms),
        max_connections: a.max_connections,
        queue_timeout: http::QUEUE_TIMEOUT,
    };
    let egtb = crate::egtb::load(a.egtb.as_deref())?;
    let addr: SocketAddr = a.addr.parse().map_err(|e| bad_input(format!("--addr `{}`: {e}", a.addr)))?;
    let listener = std::net::TcpListener::bind(addr).map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr().map_or_else(|_| addr.to_string(), |a| a.to_string());
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
        let id = model.as_ref().filter(|_| l.network).map(|m| m.model_id());
        let rating = l.rating_for(id).map_or(String::new(), |r| format!(" (Elo {:.0} [{:.0}, {:.0}])", r.elo, r.low, r.high));
        banner += &format!("level {}: {}{rating}\n", l.name, l.summary(id));
    }
    let mut out = std::io::stdout();
    let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
    if !addr.ip().is_loopback() {
        eprintln!("warning: listening on {} — reachable from other machines", addr.ip());
    }
    let service = Arc::new(api::Service::new(levels, model, a.run.clone()).with_egtb(egtb).with_policy(policy));
    http::serve(listener, service, policy).map_err(|e| anyhow::anyhow!("serving on {bound}: {e}"))?;
    Ok(ExitCode::SUCCESS)
}
