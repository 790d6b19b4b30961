//! A run directory in an object store (S3 or a compatible store: MinIO, Ceph, R2, moto).
//!
//! Object stores have no rename, no append and no directory; the training stages want a
//! directory. So a process works in a local *cache directory*, a run directory like any other,
//! and keeps it in step with `s3://BUCKET/PREFIX/` through a [`Remote`]:
//!
//! - files are **pulled** (downloaded to a temporary name in the cache and renamed), so a
//!   reader never sees half an object;
//! - files a process wrote are **pushed** create-only ([`PutMode::Create`]: S3's
//!   `If-None-Match: *`): a name written twice is [`StoreError::AlreadyExists`], never an
//!   overwrite. Shards, checkpoints and trainer states have names no two writers share, so no
//!   lock is needed; the one object many processes race for, the run's config, is created by
//!   whichever comes first and compared by the others;
//! - the few objects one process owns and rewrites (its metrics lines) are overwritten whole.
//!
//! The API is synchronous: a current-thread tokio runtime inside [`Remote`] drives the async
//! `object_store` client, so the commands stay as they are.

pub mod testing;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};

/// What can go wrong talking to the store or writing the cache.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The run location is not a URL this build knows.
    #[error("{url}: {message}")]
    Url { url: String, message: String },
    /// A create-only write found the object already there.
    #[error("{url}: already exists (objects of a run are written once; another process wrote this name)")]
    AlreadyExists { url: String },
    /// The store answered with an error (or could not be reached).
    #[error("{url}: {source}")]
    Store {
        url: String,
        #[source]
        source: object_store::Error,
    },
    /// The local cache could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Whether a `--run` value names an object store rather than a directory.
pub fn is_remote(run: &str) -> bool {
    run.contains("://")
}

/// A bucket prefix of an S3-compatible store, used as a run directory.
pub struct Remote {
    runtime: tokio::runtime::Runtime,
    store: Arc<dyn ObjectStore>,
    /// `s3://bucket/prefix` without a trailing slash.
    url: String,
    prefix: String,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote").field("url", &self.url).finish_non_exhaustive()
    }
}

impl Remote {
    /// Opens `s3://BUCKET/PREFIX` (also `s3a://`). Credentials, region and endpoint come from
    /// the usual environment variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_REGION`/`AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL` for a store other than AWS,
    /// `AWS_ALLOW_HTTP=true` for a plain-HTTP endpoint). Nothing is sent until the first call.
    pub fn open(url: &str) -> Result<Remote, StoreError> {
        Remote::open_with(url, &[])
    }

    /// [`Remote::open`] with settings on top of the environment's: `(key, value)` pairs in
    /// `object_store`'s names (`aws_endpoint`, `aws_allow_http`, `aws_access_key_id`, ...).
    pub fn open_with(url: &str, settings: &[(&str, String)]) -> Result<Remote, StoreError> {
        let bad = |message: &str| StoreError::Url { url: url.to_owned(), message: message.to_owned() };
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("not a URL"))?;
        if scheme != "s3" && scheme != "s3a" {
            return Err(bad("only s3:// (an S3-compatible object store) or a directory path can be a run"));
        }
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("no bucket (s3://BUCKET/PREFIX)"));
        }
        let prefix = prefix.trim_matches('/').to_owned();
        if prefix.split('/').any(|p| p == "." || p == "..") {
            return Err(bad("`.` and `..` are not allowed in the prefix"));
        }
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        for (key, value) in settings {
            let key = key.parse().map_err(|e: object_store::Error| bad(&e.to_string()))?;
            builder = builder.with_config(key, value);
        }
        let store = builder
            .build()
            .map_err(|e| StoreError::Url { url: url.to_owned(), message: e.to_string() })?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::Io { path: PathBuf::from("(tokio runtime)"), source: e })?;
        let url = format!("s3://{bucket}{}{prefix}", if prefix.is_empty() { "" } else { "/" });
        Ok(Remote { runtime, store: Arc::new(store), url, prefix })
    }

    /// The run's URL (`s3://bucket/prefix`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The URL of the object `rel` (a `/`-separated path inside the run).
    pub fn url_of(&self, rel: &str) -> String {
        format!("{}/{rel}", self.url)
    }

    fn key(&self, rel: &str) -> ObjectPath {
        if self.prefix.is_empty() {
            ObjectPath::from(rel)
        } else {
            ObjectPath::from(format!("{}/{rel}", self.prefix))
        }
    }

    fn store_error(&self, rel: &str, source: object_store::Error) -> StoreError {
        match source {
            object_store::Error::AlreadyExists { .. } => StoreError::AlreadyExists { url: self.url_of(rel) },
            source => StoreError::Store { url: self.url_of(rel), source },
        }
    }

    /// The objects under `dir` (a `/`-separated folder inside the run, `""` for all), as
    /// `/`-separated paths inside the run with their sizes, sorted by path.
    pub fn list(&self, dir: &str) -> Result<Vec<(String, u64)>, StoreError> {
        use futures::StreamExt;
        let base = if dir.is_empty() { None } else { Some(self.key(dir)) };
        let strip = if self.prefix.is_empty() { String::new() } else { format!("{}/", self.prefix) };
        let mut out = Vec::new();
        self.runtime.block_on(async {
            let mut stream = self.store.list(base.as_ref());
            while let Some(meta) = stream.next().await {
                let meta = meta.map_err(|e| self.store_error(dir, e))?;
                let key = meta.location.to_string();
                if let Some(rel) = key.strip_prefix(&strip) {
                    out.push((rel.to_owned(), meta.size));
                }
            }
            Ok::<(), StoreError>(())
        })?;
        out.sort();
        Ok(out)
    }

    /// The object `rel`, or `None` when there is none.
    pub fn get(&self, rel: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let key = self.key(rel);
        self.runtime.block_on(async {
            match self.store.get(&key).await {
                Ok(r) => Ok(Some(r.bytes().await.map_err(|e| self.store_error(rel, e))?.to_vec())),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(self.store_error(rel, e)),
            }
        })
    }

    /// Writes the object `rel` only if there is none: [`StoreError::AlreadyExists`] otherwise.
    pub fn put_create(&self, rel: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let key = self.key(rel);
        let opts = PutOptions { mode: PutMode::Create, ..PutOptions::default() };
        self.runtime
            .block_on(self.store.put_opts(&key, PutPayload::from(bytes), opts))
            .map(drop)
            .map_err(|e| self.store_error(rel, e))
    }

    /// Writes the object `rel`, replacing any there (for objects one process owns).
    pub fn put_overwrite(&self, rel: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let key = self.key(rel);
        self.runtime.block_on(self.store.put(&key, PutPayload::from(bytes))).map(drop).map_err(|e| self.store_error(rel, e))
    }

    /// Deletes the object `rel` (no error when it is not there).
    pub fn delete(&self, rel: &str) -> Result<(), StoreError> {
        let key = self.key(rel);
        match self.runtime.block_on(self.store.delete(&key)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.store_error(rel, e)),
        }
    }

    /// Downloads `rel` into `root/rel` (through a temporary name and a rename); false when the
    /// object is not there.
    pub fn download(&self, rel: &str, root: &Path) -> Result<bool, StoreError> {
        let Some(bytes) = self.get(rel)? else { return Ok(false) };
        write_atomic(&root.join(rel), &bytes)?;
        Ok(true)
    }

    /// Uploads `root/rel` to `rel`, create-only. An object already there with the same bytes
    /// counts as uploaded (a process killed after its upload and before it noted it, uploading
    /// again); one with other bytes is [`StoreError::AlreadyExists`].
    pub fn upload(&self, root: &Path, rel: &str) -> Result<(), StoreError> {
        let path = root.join(rel);
        let bytes = std::fs::read(&path).map_err(|source| StoreError::Io { path: path.clone(), source })?;
        match self.put_create(rel, bytes.clone()) {
            Err(StoreError::AlreadyExists { url }) => match self.get(rel)? {
                Some(there) if there == bytes => Ok(()),
                _ => Err(StoreError::AlreadyExists { url }),
            },
            other => other,
        }
    }
}

/// Writes `bytes` to `path` (creating its folder) through a temporary name and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked() {
        assert!(is_remote("s3://b/p") && !is_remote("runs/x") && !is_remote("/abs/path"));
        for (url, what) in [("gs://b/p", "only s3://"), ("s3:///p", "no bucket"), ("s3://b/../x", "not allowed"), ("nourl", "not a URL")] {
            let err = Remote::open(url).unwrap_err().to_string();
            assert!(err.contains(what) && err.contains(url), "{url}: {err}");
        }
        let r = Remote::open("s3://bucket/some/prefix/").unwrap();
        assert_eq!(r.url(), "s3://bucket/some/prefix");
        assert_eq!(r.url_of("games/a.bin"), "s3://bucket/some/prefix/games/a.bin");
        assert_eq!(r.key("games/a.bin").to_string(), "some/prefix/games/a.bin");
        assert_eq!(Remote::open("s3://bucket").unwrap().key("x").to_string(), "x");
    }
}
