//! Child processes of the benchmark (the fake API server, the controllers, the cache-memory
//! probes) and what is measured of them: peak resident memory and CPU time.
//!
//! Children are this same binary with another subcommand, or (the sample workload's
//! `--controller-cmd`) any program, started through `sh -c 'exec CMD'` so that the measured
//! process id is the program's own. Children of this binary read their stdin until it closes
//! and then exit ([`exit_when_stdin_closes`]), so none outlives the driver even if the driver is
//! killed; other programs are killed when the driver drops them.
//!
//! Peak RSS is `VmHWM` from `/proc/<pid>/status`, read just before the child is killed — not
//! `ru_maxrss` from `wait4`: Linux folds the spawning process's high-water mark into the
//! child's `ru_maxrss` when the child calls `exec` from a `vfork`-style spawn, which is how
//! `std::process::Command` starts children, so `ru_maxrss` would report the driver's size.
//! CPU time (user + system) does come from `wait4`.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use regex::Regex;

use crate::output::OutputScan;

/// A child process of this binary, killed and reaped when dropped.
pub struct ChildProcess {
    child: Option<Child>,
    what: String,
}

/// CPU time a child used.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTime {
    /// User time.
    pub user: Duration,
    /// System time.
    pub system: Duration,
}

impl CpuTime {
    /// User plus system time.
    #[must_use]
    pub fn total(self) -> Duration {
        self.user + self.system
    }
}

impl ChildProcess {
    /// Starts this binary with `args`, its stdin a pipe the child watches (see the module docs)
    /// and its stderr shared with ours; stdout is piped when `capture_stdout`.
    ///
    /// # Errors
    /// When the binary cannot be found or started.
    pub fn spawn_self(args: &[String], capture_stdout: bool) -> anyhow::Result<Self> {
        let stdout = if capture_stdout {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        let mut command = self_command(args)?;
        command.stdout(stdout).stderr(Stdio::inherit());
        let what = args.first().cloned().unwrap_or_default();
        Self::spawn(command, what)
    }

    /// Starts `command` (see [`self_command`] and [`shell_command`]) with its stdin a pipe and
    /// its stdout and stderr scanned line by line: `ready` marks it ready, the last line
    /// starting with `marker` is kept ([`OutputScan`]). `what` names it in errors.
    ///
    /// # Errors
    /// When the program cannot be started.
    pub fn spawn_scanned(
        mut command: Command,
        what: &str,
        ready: Regex,
        marker: &'static str,
    ) -> anyhow::Result<(Self, OutputScan)> {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut process = Self::spawn(command, what.to_string())?;
        let child = process
            .child
            .as_mut()
            .context("the child process is gone")?;
        let mut streams: Vec<Box<dyn Read + Send>> = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            streams.push(Box::new(stdout));
        }
        if let Some(stderr) = child.stderr.take() {
            streams.push(Box::new(stderr));
        }
        let scan = OutputScan::start(streams, ready, marker);
        Ok((process, scan))
    }

    fn spawn(mut command: Command, what: String) -> anyhow::Result<Self> {
        let child = command
            .stdin(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {what} ({command:?})"))?;
        Ok(Self {
            child: Some(child),
            what,
        })
    }

    /// The child's process id.
    ///
    /// # Errors
    /// When the child was already reaped.
    pub fn pid(&self) -> anyhow::Result<u32> {
        self.child
            .as_ref()
            .map(Child::id)
            .context("the child process is gone")
    }

    /// Takes the child's stdout (once).
    ///
    /// # Errors
    /// When stdout was not captured or already taken.
    pub fn take_stdout(&mut self) -> anyhow::Result<ChildStdout> {
        self.child
            .as_mut()
            .and_then(|c| c.stdout.take())
            .with_context(|| format!("{}: stdout not captured", self.what))
    }

    /// The first line the child prints (e.g. the fake API server's URL).
    ///
    /// # Errors
    /// When the child exits or closes stdout first.
    pub fn first_line(&mut self) -> anyhow::Result<String> {
        let mut line = String::new();
        let mut stdout = BufReader::new(self.take_stdout()?);
        stdout
            .read_line(&mut line)
            .with_context(|| format!("reading the first line of {}", self.what))?;
        if line.trim().is_empty() {
            bail!("{} exited before printing anything", self.what);
        }
        // Keep draining stdout so the child never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        Ok(line.trim().to_string())
    }

    /// The child's peak resident set size in bytes so far (`VmHWM`).
    ///
    /// # Errors
    /// When `/proc/<pid>/status` cannot be read (not Linux, or the child is gone).
    pub fn peak_rss(&self) -> anyhow::Result<u64> {
        self.status_bytes("VmHWM")
    }

    /// The child's resident set size in bytes now (`VmRSS`).
    ///
    /// # Errors
    /// As [`ChildProcess::peak_rss`].
    pub fn rss(&self) -> anyhow::Result<u64> {
        self.status_bytes("VmRSS")
    }

    fn status_bytes(&self, field: &str) -> anyhow::Result<u64> {
        let pid = self.pid()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .with_context(|| format!("reading /proc/{pid}/status"))?;
        parse_status_kib(&status, field)
            .with_context(|| format!("no {field} line in /proc/{pid}/status"))
    }

    /// Resolves once the child has exited, without reaping it (so [`ChildProcess::kill`] still
    /// collects its CPU time): polls the state in `/proc/<pid>/stat` every 100 ms.
    pub async fn exited(&self) {
        let Ok(pid) = self.pid() else {
            return;
        };
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // `pid (command name) STATE ...`; the name may contain spaces and parentheses.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            if matches!(state, None | Some("Z" | "X")) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Kills the child (SIGKILL) and reaps it, returning the CPU time it used.
    ///
    /// # Errors
    /// When the child cannot be signalled or reaped.
    pub fn kill(mut self) -> anyhow::Result<CpuTime> {
        let Some(mut child) = self.child.take() else {
            bail!("{}: already reaped", self.what);
        };
        child
            .kill()
            .with_context(|| format!("killing {}", self.what))?;
        reap(child.id())
    }

    /// Stops the child as an operator would: SIGTERM, then SIGKILL if it has not exited after
    /// `grace`; reaps it and returns the CPU time it used.
    ///
    /// # Errors
    /// When the child cannot be signalled or reaped.
    pub async fn terminate(mut self, grace: Duration) -> anyhow::Result<CpuTime> {
        let pid = libc::pid_t::try_from(self.pid()?).context("pid out of range")?;
        // SAFETY: `kill(2)` has no memory effects; `pid` is our own child, not yet reaped (so
        // the id cannot have been reused).
        if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
            bail!(
                "sending SIGTERM to {}: {}",
                self.what,
                std::io::Error::last_os_error()
            );
        }
        let stopped = tokio::time::timeout(grace, self.exited()).await.is_ok();
        let Some(mut child) = self.child.take() else {
            bail!("{}: already reaped", self.what);
        };
        if !stopped {
            eprintln!("{} ignored SIGTERM for {grace:?}; killing it", self.what);
            child
                .kill()
                .with_context(|| format!("killing {}", self.what))?;
        }
        reap(child.id())
    }

    /// Stops a child that exits when its stdin closes (the server subcommands): closes stdin,
    /// waits up to `grace` for it to clean up and exit, then kills it. For a drop, so errors
    /// are ignored.
    pub fn close_stdin_and_wait(mut self, grace: Duration) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        drop(child.stdin.take());
        let deadline = std::time::Instant::now() + grace;
        while std::time::Instant::now() < deadline {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Waits for the child to exit on its own and returns its stdout and exit status.
    ///
    /// # Errors
    /// When waiting fails or the child exits unsuccessfully.
    pub fn wait_for_output(mut self) -> anyhow::Result<String> {
        let mut out = String::new();
        self.take_stdout()?
            .read_to_string(&mut out)
            .with_context(|| format!("reading the output of {}", self.what))?;
        let Some(mut child) = self.child.take() else {
            bail!("{}: already reaped", self.what);
        };
        let status = child.wait()?;
        if !status.success() {
            bail!("{} failed ({status})", self.what);
        }
        Ok(out)
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Parses a `/proc/<pid>/status` line such as `VmHWM:   12345 kB` into bytes.
fn parse_status_kib(status: &str, field: &str) -> Option<u64> {
    let line = status
        .lines()
        .find(|l| l.split_once(':').is_some_and(|(name, _)| name == field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A command running this binary with `args`.
///
/// # Errors
/// When the binary cannot be located.
pub fn self_command(args: &[String]) -> anyhow::Result<Command> {
    let exe = std::env::current_exe().context("locating the kbr-bench binary")?;
    let mut command = Command::new(exe);
    command.args(args);
    Ok(command)
}

/// A command running the shell command line `line` as one program: `sh -c 'exec LINE'`, so the
/// program replaces the shell and keeps its process id (quotes, variables and `env VAR=..`
/// prefixes work; pipelines and `;` lists do not).
#[must_use]
pub fn shell_command(line: &str) -> Command {
    let mut command = Command::new("sh");
    command.arg("-c").arg(format!("exec {line}"));
    command
}

/// Reaps child `pid` with `wait4(2)` for its resource usage.
fn reap(pid: u32) -> anyhow::Result<CpuTime> {
    let pid = libc::pid_t::try_from(pid).context("pid out of range")?;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain old data that `wait4` fills in; all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unreaped child (std's `Child` only reaps in `wait`/`try_wait`,
    // which were not called), and both pointers are valid for the duration of the call.
    let reaped = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
    if reaped != pid {
        bail!("wait4({pid}): {}", std::io::Error::last_os_error());
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    Ok(CpuTime {
        user: time(usage.ru_utime),
        system: time(usage.ru_stime),
    })
}

/// In a child: exits the process as soon as stdin closes (the driver exited or dropped us).
pub fn exit_when_stdin_closes() {
    std::thread::spawn(|| {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        std::process::exit(0);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_read_in_bytes() {
        let status = "Name:\tkbr-bench\nVmPeak:\t  999 kB\nVmHWM:\t   2048 kB\nVmRSS:\t 1000 kB\n";
        assert_eq!(parse_status_kib(status, "VmHWM"), Some(2048 * 1024));
        assert_eq!(parse_status_kib(status, "VmRSS"), Some(1000 * 1024));
        assert_eq!(parse_status_kib("Name: x\n", "VmHWM"), None);
    }

    #[tokio::test]
    async fn a_shell_command_keeps_its_pid_and_is_stopped_by_sigterm() -> anyhow::Result<()> {
        let ready = Regex::new("^up$")?;
        let line =
            "sh -c 'trap \"echo stats bye; exit 0\" TERM; echo up; while :; do sleep 0.05; done'";
        let (child, mut out) =
            ChildProcess::spawn_scanned(shell_command(line), "test child", ready, "stats")?;
        assert!(out.ready().await);
        let pid = child.pid()?;
        let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline"))?;
        assert!(
            cmdline.contains("trap"),
            "exec replaced the outer shell: {cmdline:?}"
        );
        assert!(child.peak_rss()? >= child.rss()?);
        child.terminate(Duration::from_secs(10)).await?;
        assert!(out.closed(Duration::from_secs(10)).await);
        assert_eq!(out.marked().as_deref(), Some("stats bye"));
        Ok(())
    }
}
