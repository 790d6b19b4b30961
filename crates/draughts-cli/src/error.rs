//! Error classes and exit codes.

use std::fmt;
use std::process::ExitCode;

/// Bad input from the user (exit status 2). The message names what is wrong and where.
#[derive(Debug)]
pub struct BadInput(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Wraps any error (or message) as bad input.
pub fn bad_input(e: impl fmt::Display) -> anyhow::Error {
    anyhow::Error::new(BadInput(e.to_string()))
}

/// Prints the error and picks the exit status: 2 for bad input, 1 for everything else.
pub fn report(e: &anyhow::Error) -> ExitCode {
    eprintln!("error: {e:#}");
    if e.chain().any(|c| c.is::<BadInput>()) {
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    }
}
