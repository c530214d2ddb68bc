//! The `kbr` binary: parses flags, runs the command, prints `Error: <message>` and exits 1 on
//! failure (clap's usage errors keep clap's message and exit code 2).

// Every published crate documents its whole public API.
#![deny(missing_docs)]

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = kbr::cli::Cli::parse();
    let result = kbr::cli::Env::from_process()
        .map_err(|err| format!("cannot read the current directory: {err}"))
        .and_then(|env| {
            kbr::run(cli, &env, &mut std::io::stdout().lock()).map_err(|err| err.to_string())
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("Error: {message}");
            ExitCode::FAILURE
        }
    }
}
