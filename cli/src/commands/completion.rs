//! `kbr completion <shell>`: a completion script for bash, zsh, fish, PowerShell or elvish.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

/// Writes the completion script for `shell` to `out`.
pub fn run(shell: Shell, out: &mut dyn Write) {
    clap_complete::generate(shell, &mut Cli::command(), "kbr", out);
}
