//! Seals checkpoint sidecars written before sidecars carried their own checksum
//! (`sidecar_fnv1a64`): reads each one (checked as any reader checks it), writes it back sealed.
//!
//!     cargo run -p draughts-model --example seal -- models/NAME/NAME-sSTEP.json ...

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut failed = false;
    for arg in std::env::args().skip(1) {
        let path = Path::new(&arg);
        let sealed = draughts_model::read_meta(path).map(|meta| draughts_model::sidecar::to_json(&meta));
        let written = sealed.map_err(|e| e.to_string()).and_then(|json| {
            let tmp = path.with_extension("json.tmp");
            std::fs::write(&tmp, json).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| format!("{}: {e}", path.display()))
        });
        match written {
            Ok(()) => println!("sealed {}", path.display()),
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}
