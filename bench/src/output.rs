//! Reading a controller process's stdout and stderr line by line while it runs: whether it has
//! printed its "caches synced" line yet (a regex, `--ready-pattern`), its last marked line (the
//! statistics line), and its last few lines for error messages.
//!
//! One thread per stream reads to the end, so the child never blocks on a full pipe however
//! much it logs (client-go controllers log a line per sync); lines are not kept beyond
//! [`TAIL_LINES`].

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use regex::Regex;
use tokio::sync::watch;

/// How many of the last lines are kept for error messages.
pub const TAIL_LINES: usize = 20;

/// Where the scan is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Progress {
    /// A line matched the ready pattern.
    ready: bool,
    /// Streams still open.
    open: usize,
    /// Marked lines seen so far.
    marked: u64,
}

#[derive(Debug, Default)]
struct Lines {
    tail: VecDeque<String>,
    marked: Option<String>,
}

/// The running scan of a child's output.
#[derive(Debug)]
pub struct OutputScan {
    progress: watch::Receiver<Progress>,
    lines: Arc<Mutex<Lines>>,
}

impl OutputScan {
    /// Scans `streams` (a child's stdout and stderr): a line matching `ready` marks the child
    /// ready; the last line whose first word is `marker` is kept.
    #[must_use]
    pub fn start(streams: Vec<Box<dyn Read + Send>>, ready: Regex, marker: &'static str) -> Self {
        let (progress, receiver) = watch::channel(Progress {
            ready: false,
            open: streams.len(),
            marked: 0,
        });
        let progress = Arc::new(progress);
        let lines = Arc::new(Mutex::new(Lines::default()));
        for stream in streams {
            let (progress, lines, ready) = (progress.clone(), lines.clone(), ready.clone());
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { break };
                    if ready.is_match(&line) {
                        progress.send_modify(|p| p.ready = true);
                    }
                    let mut kept = lines.lock().unwrap_or_else(PoisonError::into_inner);
                    let marked = line.split_whitespace().next() == Some(marker);
                    if marked {
                        kept.marked = Some(line.clone());
                    }
                    kept.tail.push_back(line);
                    if kept.tail.len() > TAIL_LINES {
                        kept.tail.pop_front();
                    }
                    drop(kept);
                    if marked {
                        progress.send_modify(|p| p.marked += 1);
                    }
                }
                progress.send_modify(|p| p.open -= 1);
            });
        }
        Self {
            progress: receiver,
            lines,
        }
    }

    /// Waits until a line matched the ready pattern (`true`) or every stream closed first
    /// (`false`: the child exited or closed its output without becoming ready).
    pub async fn ready(&mut self) -> bool {
        match self.progress.wait_for(|p| p.ready || p.open == 0).await {
            Ok(progress) => progress.ready,
            Err(_) => false,
        }
    }

    /// Waits up to `timeout` for every stream to close (the child exited and nothing else holds
    /// its pipes); whether they did.
    pub async fn closed(&mut self, timeout: Duration) -> bool {
        let closed = self.progress.wait_for(|p| p.open == 0);
        matches!(tokio::time::timeout(timeout, closed).await, Ok(Ok(_)))
    }

    /// Waits until the last marked line satisfies `wanted` and returns it, or `None` once every
    /// stream closed without one.
    pub async fn marked_matching(&mut self, wanted: impl Fn(&str) -> bool) -> Option<String> {
        let lines = Arc::clone(&self.lines);
        let matches = |lines: &Mutex<Lines>| {
            let lines = lines.lock().unwrap_or_else(PoisonError::into_inner);
            lines.marked.as_deref().is_some_and(&wanted)
        };
        let _ = (self.progress)
            .wait_for(|p| p.open == 0 || matches(&lines))
            .await;
        self.marked().filter(|line| wanted(line))
    }

    /// The last line whose first word was the marker.
    #[must_use]
    pub fn marked(&self) -> Option<String> {
        self.lock().marked.clone()
    }

    /// The last [`TAIL_LINES`] lines, indented, for an error message (`(no output)` if none).
    #[must_use]
    pub fn tail(&self) -> String {
        let lines = self.lock();
        if lines.tail.is_empty() {
            return "(no output)".to_string();
        }
        lines
            .tail
            .iter()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Lines> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(stdout: &str, stderr: &str, ready: &str) -> OutputScan {
        let stream = |text: &str| -> Box<dyn Read + Send> {
            Box::new(std::io::Cursor::new(text.as_bytes().to_vec()))
        };
        let streams = vec![stream(stdout), stream(stderr)];
        let Ok(ready) = Regex::new(ready) else {
            panic!("a valid pattern");
        };
        OutputScan::start(streams, ready, "stats")
    }

    #[tokio::test]
    async fn a_line_on_either_stream_marks_the_child_ready() {
        let mut out = scan(
            "starting\n",
            "I0101 Starting workers count=16\n",
            "Starting workers",
        );
        assert!(out.ready().await);
        assert!(out.closed(Duration::from_secs(5)).await);
    }

    #[tokio::test]
    async fn output_that_ends_without_the_pattern_is_not_ready() {
        let mut out = scan("stats a=1\nerror: no kubeconfig\nstats a=2\n", "", "synced");
        assert!(!out.ready().await);
        assert!(out.closed(Duration::from_secs(5)).await);
        assert_eq!(out.marked().as_deref(), Some("stats a=2"));
        assert!(out.tail().contains("    error: no kubeconfig"));
    }

    #[tokio::test]
    async fn a_wanted_marked_line_is_waited_for() {
        let mut out = scan("stats drained=0\nstats drained=1\n", "", "synced");
        let line = out.marked_matching(|l| l.ends_with("drained=1")).await;
        assert_eq!(line.as_deref(), Some("stats drained=1"));
        let mut out = scan("stats drained=0\n", "", "synced");
        assert_eq!(out.marked_matching(|l| l.ends_with("=1")).await, None);
    }

    #[tokio::test]
    async fn only_the_last_lines_are_kept() {
        let many: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let mut out = scan(&many, "", "never");
        assert!(out.closed(Duration::from_secs(5)).await);
        let tail = out.tail();
        assert_eq!(tail.lines().count(), TAIL_LINES);
        assert!(tail.ends_with("line 99") && !tail.contains("line 79\n"));
    }
}
