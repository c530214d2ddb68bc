//! One control-plane process (etcd or kube-apiserver) that never outlives its test.
//!
//! - **Drop** kills it (SIGKILL to its process group on Unix) and reaps it.
//! - **The test process dying** (a panic that aborts, SIGKILL, a crashed harness) kills it
//!   too, on Linux: the child asks for `PR_SET_PDEATHSIG` = SIGKILL before `exec`. That signal
//!   fires when the *thread* that spawned the child ends, so each child is spawned from a small
//!   keeper thread that lives exactly as long as the [`Process`] — not from whichever test or
//!   runtime worker thread happened to call [`super::Environment::start`].
//! - Each child leads its own **process group** (so a terminal's Ctrl-C goes to the test
//!   harness, which then drops or dies, and so the kill reaches anything the child forked).
//!
//! Output (stdout and stderr together) goes to `<data dir>/<name>.log`; start-up errors quote
//! its last lines.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;

use super::Error;

/// How many lines of output an error quotes.
const TAIL_LINES: usize = 30;

/// A running child process, killed and reaped on drop.
pub(super) struct Process {
    name: &'static str,
    child: Child,
    /// Set once the child was reaped (by [`Process::exit_status`] or the kill); its pid may be
    /// reused by then, so it is never signalled again.
    reaped: Option<ExitStatus>,
    log: PathBuf,
    /// Dropping it ends the keeper thread.
    keeper: Option<mpsc::Sender<()>>,
}

impl std::fmt::Debug for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process")
            .field("name", &self.name)
            .field("pid", &self.child.id())
            .field("log", &self.log)
            .finish_non_exhaustive()
    }
}

impl Process {
    /// Starts `binary` with `args`, output to `<log_dir>/<name>.log`.
    pub(super) fn spawn(
        name: &'static str,
        binary: &Path,
        args: &[String],
        log_dir: &Path,
    ) -> Result<Self, Error> {
        let log = log_dir.join(format!("{name}.log"));
        let out = File::create(&log).map_err(Error::io(format!("creating {}", log.display())))?;
        let err = out
            .try_clone()
            .map_err(Error::io(format!("opening {}", log.display())))?;
        let mut command = Command::new(binary);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        isolate(&mut command);
        let spawn_error = |source| Error::Spawn {
            process: name,
            path: binary.to_path_buf(),
            source,
        };

        let (child_tx, child_rx) = mpsc::channel();
        let (keeper, stop) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name(format!("envtest-{name}"))
            .spawn(move || {
                let spawned = command.spawn();
                let ok = spawned.is_ok();
                if child_tx.send(spawned).is_ok() && ok {
                    // Blocks until the `Process` drops its sender (after killing the child).
                    let _ = stop.recv();
                }
            })
            .map_err(spawn_error)?;
        let child = child_rx
            .recv()
            .map_err(|_| spawn_error(std::io::Error::other("the keeper thread died")))?
            .map_err(spawn_error)?;
        tracing::debug!(process = name, pid = child.id(), log = %log.display(), "envtest process started");
        Ok(Self {
            name,
            child,
            reaped: None,
            log,
            keeper: Some(keeper),
        })
    }

    /// `etcd` or `kube-apiserver`.
    pub(super) fn name(&self) -> &'static str {
        self.name
    }

    /// The file holding the process's output.
    pub(super) fn log(&self) -> &Path {
        &self.log
    }

    /// The exit status if the process has exited (without blocking).
    pub(super) fn exit_status(&mut self) -> Option<ExitStatus> {
        if self.reaped.is_none() {
            self.reaped = self.child.try_wait().ok().flatten();
        }
        self.reaped
    }

    /// The last lines of the process's output.
    pub(super) fn tail(&self) -> String {
        let text = std::fs::read(&self.log)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
    }

    /// The error for a process that exited during start-up, if it did.
    pub(super) fn check_running(&mut self) -> Result<(), Error> {
        match self.exit_status() {
            None => Ok(()),
            Some(status) => Err(Error::ExitedEarly {
                process: self.name,
                status: status.to_string(),
                log: self.log.clone(),
                tail: self.tail(),
            }),
        }
    }

    /// Kills the process (its whole process group on Unix) and reaps it. Idempotent.
    fn stop(&mut self) {
        if self.reaped.is_none() {
            kill(&mut self.child);
            self.reaped = self.child.wait().ok();
            tracing::debug!(process = self.name, "envtest process stopped");
        }
        self.keeper = None;
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Own process group; on Linux, SIGKILL when the spawning (keeper) thread ends.
#[cfg(unix)]
fn isolate(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: the closure runs in the forked child before `exec` and only makes
        // async-signal-safe calls (`prctl`, `getppid`); it allocates nothing (`last_os_error`
        // and `from_raw_os_error` only store an errno).
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died between fork and prctl: then nobody would kill us.
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
}

#[cfg(not(unix))]
fn isolate(_command: &mut Command) {}

/// SIGKILL to the child's process group (it leads one, see [`isolate`]).
#[cfg(unix)]
fn kill(child: &mut Child) {
    match libc::pid_t::try_from(child.id()) {
        // SAFETY: `kill` has no memory-safety preconditions; the child has not been reaped, so
        // its pid (= its process group id) still names it.
        Ok(pgid) if pgid > 0 => unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        },
        _ => {
            let _ = child.kill();
        }
    }
}

#[cfg(not(unix))]
fn kill(child: &mut Child) {
    let _ = child.kill();
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn drop_kills_and_reaps_the_process_group() {
        let dir = tempfile::tempdir().expect("temp dir");
        let process = Process::spawn(
            "sleeper",
            Path::new("/bin/sh"),
            &["-c".into(), "echo started; exec sleep 600".into()],
            dir.path(),
        )
        .expect("spawn");
        let pid = process.child.id() as libc::pid_t;
        drop(process);
        // SAFETY: signal 0 only checks whether the pid exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        assert!(!alive, "the child was killed and reaped");
    }

    #[test]
    fn an_exited_process_reports_its_status_and_output() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut process = Process::spawn(
            "failing",
            Path::new("/bin/sh"),
            &["-c".into(), "echo line one; echo boom >&2; exit 3".into()],
            dir.path(),
        )
        .expect("spawn");
        let status = process.child.wait().expect("wait");
        process.reaped = Some(status);
        match process.check_running() {
            Err(Error::ExitedEarly { status, tail, .. }) => {
                assert!(status.contains('3'), "{status}");
                assert_eq!(tail, "line one\nboom");
            }
            other => panic!("expected ExitedEarly, got {other:?}"),
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_child_dies_with_the_thread_that_spawned_it() {
        use std::os::unix::process::ExitStatusExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let mut process = Process::spawn(
            "orphan",
            Path::new("/bin/sh"),
            &["-c".into(), "exec sleep 600".into()],
            dir.path(),
        )
        .expect("spawn");
        // End the keeper thread without killing the child, as if the test process died.
        process.keeper = None;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let status = loop {
            if let Some(status) = process.exit_status() {
                break status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the child outlived its keeper thread"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn a_missing_binary_is_a_spawn_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let err = Process::spawn("nothing", Path::new("/nonexistent/etcd"), &[], dir.path())
            .expect_err("no binary");
        assert!(
            matches!(
                err,
                Error::Spawn {
                    process: "nothing",
                    ..
                }
            ),
            "{err}"
        );
    }
}
