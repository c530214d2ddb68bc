//! kbr: Kubebuilder for Rust.
//!
//! The library behind the `kbr` binary, so every command is testable without spawning a
//! process. A command flows one way (`docs/design-notes.md`, "A command flows one way"): parsed
//! flags ([`cli`]) -> validated and derived names ([`names`], plurals from
//! [`kbr_core::plural`]) -> template contexts ([`context`]) -> a render plan of new files and
//! marker insertions ([`plan`], [`templates`]) -> written atomically. The `PROJECT` file
//! ([`project`]) records what was scaffolded.
//!
//! ```no_run
//! use clap::Parser;
//!
//! let cli = kbr::cli::Cli::parse_from(["kbr", "init", "--domain", "knative.dev"]);
//! let env = kbr::cli::Env::from_process()?;
//! kbr::run(cli, &env, &mut std::io::stdout())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Every published crate documents its whole public API.
#![deny(missing_docs)]

pub mod builtin;
pub mod cli;
pub mod commands;
pub mod context;
pub mod error;
pub mod grafana;
pub mod license;
pub mod multicluster;
pub mod names;
pub mod plan;
pub mod project;
pub mod templates;

pub use error::Error;

use std::io::Write;

use cli::{AlphaCommand, Cli, Command, CreateCommand, Env};

/// Runs the command of `cli` in `env`, writing its normal output to `out`.
///
/// # Errors
///
/// The command's error; nothing was written to the project when it is returned.
pub fn run(cli: Cli, env: &Env, out: &mut dyn Write) -> Result<(), Error> {
    match cli.command {
        Command::Init(args) => commands::init::run(&args, env, out).map_err(Error::Init),
        Command::Create(CreateCommand::Api(args)) => {
            commands::create_api::run(&args, env, out).map_err(Error::CreateApi)
        }
        Command::Create(CreateCommand::Webhook(args)) => {
            commands::create_webhook::run(&args, env, out).map_err(Error::CreateWebhook)
        }
        Command::Edit(args) => commands::edit::run(&args, env, out).map_err(Error::Edit),
        Command::Alpha(AlphaCommand::Generate(args)) => {
            commands::alpha::generate::run(&args, env, out).map_err(Error::Generate)
        }
        Command::Alpha(AlphaCommand::Update(args)) => {
            commands::alpha::update::run(&args, env, out).map_err(Error::Update)
        }
        Command::Version => commands::version::run(out).map_err(Error::Output),
        Command::Completion(args) => {
            commands::completion::run(args.shell, out);
            Ok(())
        }
    }
}
