//! Free loopback ports for etcd, kube-apiserver and a local webhook server.
//!
//! Like controller-runtime's `addr.Suggest`: ask the OS for an unused port (bind port 0), close
//! it, and hand the number to the process. Another process can take the port in between; the
//! ports this test process already handed out are remembered and never handed out again, and
//! [`super::Environment::start`] retries a start whose process reports "address already in use".

use std::collections::HashSet;
use std::net::{Ipv4Addr, TcpListener};
use std::sync::{Mutex, PoisonError};

use super::Error;

static HANDED_OUT: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// A loopback TCP port nothing listened on a moment ago and that this process has not handed
/// out before.
pub(super) fn free_port() -> Result<u16, Error> {
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(PoisonError::into_inner);
    let handed_out = handed_out.get_or_insert_with(HashSet::new);
    for _ in 0..64 {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(Error::io("binding a free loopback port"))?;
        let port = listener
            .local_addr()
            .map_err(Error::io("reading a bound port"))?
            .port();
        if handed_out.insert(port) {
            return Ok(port);
        }
    }
    Err(Error::Io {
        what: "finding a free loopback port".into(),
        source: std::io::Error::new(
            std::io::ErrorKind::AddrInUse,
            "the OS kept returning ports already handed out",
        ),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn ports_are_never_handed_out_twice() {
        let a = super::free_port().expect("port");
        let b = super::free_port().expect("port");
        assert_ne!(a, b);
    }
}
