//! The object store against a real S3-compatible server on the loopback address (moto_server,
//! started here; see `draughts_store::testing`).

use draughts_store::testing::MotoServer;
use draughts_store::{Remote, StoreError};

#[test]
fn create_only_writes_list_get_download_and_upload_against_s3() {
    let Some(server) = MotoServer::start("runs") else { return };
    let settings = server.settings();
    let remote = Remote::open_with("s3://runs/team/run1", &settings).unwrap();

    // Create-only: the second write of a name fails, and the first one's bytes stay.
    remote.put_create("games/a.bin", b"first".to_vec()).unwrap();
    let err = remote.put_create("games/a.bin", b"second".to_vec()).unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err}");
    assert!(err.to_string().contains("s3://runs/team/run1/games/a.bin"), "{err}");
    assert_eq!(remote.get("games/a.bin").unwrap().as_deref(), Some(&b"first"[..]));
    assert_eq!(remote.get("games/none.bin").unwrap(), None);

    remote.put_create("games/b.bin", vec![7; 100_000]).unwrap();
    remote.put_create("checkpoints/x.json", b"{}".to_vec()).unwrap();
    assert_eq!(
        remote.list("games").unwrap(),
        vec![("games/a.bin".to_owned(), 5), ("games/b.bin".to_owned(), 100_000)]
    );
    assert_eq!(remote.list("").unwrap().len(), 3);
    // Another prefix of the same bucket is another run.
    assert!(Remote::open_with("s3://runs/team/run2", &settings).unwrap().list("").unwrap().is_empty());

    // Download into a cache directory, upload from it.
    let cache = tempfile::tempdir().unwrap();
    assert!(remote.download("games/b.bin", cache.path()).unwrap());
    assert_eq!(std::fs::read(cache.path().join("games/b.bin")).unwrap(), vec![7; 100_000]);
    assert!(!remote.download("games/none.bin", cache.path()).unwrap());
    std::fs::write(cache.path().join("games/c.bin"), b"mine").unwrap();
    remote.upload(cache.path(), "games/c.bin").unwrap();
    // Uploading the same bytes again is the same upload (a retry after a kill) ...
    remote.upload(cache.path(), "games/c.bin").unwrap();
    // ... other bytes under a name already there are refused.
    std::fs::write(cache.path().join("games/c.bin"), b"other").unwrap();
    assert!(matches!(remote.upload(cache.path(), "games/c.bin"), Err(StoreError::AlreadyExists { .. })));
    assert_eq!(remote.get("games/c.bin").unwrap().as_deref(), Some(&b"mine"[..]));

    // Overwrite (objects one process owns) and delete.
    remote.put_overwrite("metrics/w1.jsonl", b"{}\n".to_vec()).unwrap();
    remote.put_overwrite("metrics/w1.jsonl", b"{}\n{}\n".to_vec()).unwrap();
    assert_eq!(remote.get("metrics/w1.jsonl").unwrap().unwrap().len(), 6);
    remote.delete("metrics/w1.jsonl").unwrap();
    remote.delete("metrics/w1.jsonl").unwrap();
    assert_eq!(remote.get("metrics/w1.jsonl").unwrap(), None);
}

#[test]
fn an_unreachable_store_is_an_error_naming_the_object() {
    let Some(server) = MotoServer::start("other") else { return };
    let mut settings = server.settings();
    drop(server);
    // Nothing listens there any more.
    settings.retain(|(k, _)| *k != "aws_endpoint");
    settings.push(("aws_endpoint", "http://127.0.0.1:9".to_owned()));
    let remote = Remote::open_with("s3://other/p", &settings).unwrap();
    let err = remote.get("config.toml").unwrap_err();
    assert!(err.to_string().contains("s3://other/p/config.toml"), "{err}");
}
