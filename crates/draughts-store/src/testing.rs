//! A local S3 for tests: PyPI's `moto_server` (from `moto[server]`) on a free loopback port,
//! with a bucket. `scripts/test` installs it into `${XDG_CACHE_HOME:-~/.cache}/draughts/moto-venv`
//! and sets `DRAUGHTS_REQUIRE_MOTO=1`, so that in the test suite a missing server is a failure;
//! a plain `cargo test` without it skips the object-store tests with a message.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `moto_server`, stopped on drop.
#[derive(Debug)]
pub struct MotoServer {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
}

fn find_moto() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MOTO_SERVER") {
        return Some(PathBuf::from(p));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let venv = cache.join("draughts/moto-venv/bin/moto_server");
    if venv.is_file() {
        return Some(venv);
    }
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| PathBuf::from(d).join("moto_server")).find(|p| p.is_file())
}

/// One HTTP request without a body to the server; the status code.
fn request(endpoint_port: u16, method: &str, path: &str) -> std::io::Result<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", endpoint_port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(s, "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{endpoint_port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head)?;
    let text = String::from_utf8_lossy(&head);
    text.get(9..12).and_then(|c| c.parse().ok()).ok_or_else(|| std::io::Error::other(format!("not HTTP: {text}")))
}

impl MotoServer {
    /// Starts the server with bucket `bucket`; `None` (after printing why) when `moto_server`
    /// is not installed and `DRAUGHTS_REQUIRE_MOTO` is not set. Panics when it is set and the
    /// server is missing, or when the server does not come up.
    pub fn start(bucket: &str) -> Option<MotoServer> {
        let Some(exe) = find_moto() else {
            assert!(
                std::env::var_os("DRAUGHTS_REQUIRE_MOTO").is_none(),
                "DRAUGHTS_REQUIRE_MOTO is set and moto_server is not installed (scripts/test installs it)"
            );
            eprintln!("skipped: moto_server is not installed (scripts/test installs it; or set MOTO_SERVER)");
            return None;
        };
        // The port is picked by binding and releasing it, so another process may take it before
        // moto_server binds it: a server that exits is started again on another port. The
        // deadline is a safety net for a machine so loaded that Python takes minutes to start.
        let spawn = || {
            let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
            let child = Command::new(&exe)
                .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
            (port, MotoServer { child, endpoint: format!("http://127.0.0.1:{port}") })
        };
        let (mut port, mut server) = spawn();
        let start = Instant::now();
        let mut restarts = 0;
        loop {
            match request(port, "PUT", &format!("/{bucket}")) {
                Ok(200) => break,
                Ok(code) => panic!("moto_server: creating bucket {bucket} answered {code}"),
                Err(e) => {
                    if let Ok(Some(status)) = server.child.try_wait() {
                        restarts += 1;
                        assert!(restarts <= 5, "moto_server exited {restarts} times (last: {status} on port {port})");
                        (port, server) = spawn();
                    } else if start.elapsed() >= Duration::from_secs(120) {
                        panic!("moto_server did not come up on port {port} within 120 s: {e}");
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
        Some(server)
    }

    /// The environment a process needs to use this server as its S3.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "testing".into()),
            ("AWS_SECRET_ACCESS_KEY", "testing".into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
    }

    /// The same as [`crate::Remote::open_with`] settings (the environment is shared by the
    /// threads of a test binary, so tests in one process do not set it).
    pub fn settings(&self) -> Vec<(&'static str, String)> {
        self.env().into_iter().map(|(k, v)| (env_to_key(k), v)).collect()
    }
}

fn env_to_key(var: &str) -> &'static str {
    match var {
        "AWS_ENDPOINT_URL" => "aws_endpoint",
        "AWS_ALLOW_HTTP" => "aws_allow_http",
        "AWS_ACCESS_KEY_ID" => "aws_access_key_id",
        "AWS_SECRET_ACCESS_KEY" => "aws_secret_access_key",
        _ => "aws_region",
    }
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}
