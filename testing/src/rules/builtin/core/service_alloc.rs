//! Cluster IPs and node ports, allocated as the Service REST storage does
//! (`pkg/registry/core/service/storage/alloc.go`, `ipallocator`, `portallocator`) on a cluster
//! set up as envtest's: service range `10.0.0.0/24` (`--service-cluster-ip-range`, its first
//! address kept for the `kubernetes` Service), node ports `30000-32767`.
//!
//! A Service that needs a cluster IP gets one unless it asks for one (`clusterIP`) or is
//! headless (`None`); one that needs node ports gets one per port without one. Dynamic
//! addresses and ports come from above the range's static band (its first 16 addresses, its
//! first 86 ports) first, at a random place, as the allocators' `allocateNext` does, so a test
//! that asks for a value in the static band does not collide with allocated ones. A requested address or port outside
//! the range, or already taken, is a 422 with the allocator's words. What a write allocates is
//! kept only once it is stored ([`Allocations::commit`]); a deleted Service gives its values
//! back ([`Allocations::release`]).

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use serde_json::{Value, json};

use kbr_runtime::field_error::FieldError;

use crate::machinery::names::NameGenerator;
use crate::rules::builtin::core::service::{is_headless, needs_cluster_ip, needs_node_ports};
use crate::rules::builtin::object::{child, items, items_mut};

/// The service range's network address, `10.0.0.0`.
const NETWORK: u32 = 0x0A00_0000;
/// Addresses in the `/24` (network and broadcast excluded): offsets 1..=254.
const LAST_OFFSET: u32 = 254;
/// The first offsets, allocated only when asked for or when the rest is full.
const STATIC_BAND: u32 = 16;
/// The node port range.
const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;
/// The node ports at the range's start allocated only when asked for or when the rest is full
/// (`portallocator`'s offset: the range's size / 32, between 16 and 128).
const NODE_PORT_STATIC_BAND: i64 = 86;

/// The cluster IPs and node ports in use.
#[derive(Debug, Default)]
pub(crate) struct Allocations {
    ips: BTreeSet<u32>,
    node_ports: BTreeSet<i64>,
}

/// What one write allocates and gives back.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    ips: Vec<u32>,
    node_ports: Vec<i64>,
    freed_ips: Vec<u32>,
    freed_node_ports: Vec<i64>,
}

fn ip_text(offset: u32) -> String {
    Ipv4Addr::from(NETWORK + offset).to_string()
}

/// The offset of `ip` in the service range, when it is in it.
fn offset_of(ip: &str) -> Option<u32> {
    let addr: Ipv4Addr = ip.parse().ok()?;
    let offset = u32::from(addr).checked_sub(NETWORK)?;
    (1..=LAST_OFFSET).contains(&offset).then_some(offset)
}

fn cluster_ip(svc: &Value) -> Option<&str> {
    svc.pointer("/spec/clusterIP")
        .and_then(Value::as_str)
        .filter(|ip| !ip.is_empty() && *ip != "None")
}

fn node_ports(svc: &Value) -> Vec<i64> {
    items(svc.get("spec").unwrap_or(&Value::Null), "ports")
        .iter()
        .filter_map(|p| p.get("nodePort").and_then(Value::as_i64))
        .filter(|n| *n != 0)
        .collect()
}

impl Allocations {
    /// The first offset from a random place in `range` (wrapping) not in use or planned.
    fn next_ip(&self, planned: &[u32], names: &mut NameGenerator) -> Option<u32> {
        let free = |o: &u32| !self.ips.contains(o) && !planned.contains(o) && *o != 1;
        for (low, high) in [(STATIC_BAND + 1, LAST_OFFSET), (1, STATIC_BAND)] {
            let size = u64::from(high - low + 1);
            let start = (names.next_u64() % size) as u32;
            let found = (0..high - low + 1)
                .map(|i| low + (start + i) % (high - low + 1))
                .find(free);
            if found.is_some() {
                return found;
            }
        }
        None
    }

    fn next_node_port(&self, planned: &[i64], names: &mut NameGenerator) -> Option<i64> {
        let (first, last) = (*NODE_PORTS.start(), *NODE_PORTS.end());
        let band = first + NODE_PORT_STATIC_BAND;
        for (low, high) in [(band, last), (first, band - 1)] {
            let size = high - low + 1;
            let start = (names.next_u64() % size as u64) as i64;
            let found = (0..size)
                .map(|i| low + (start + i) % size)
                .find(|p| !self.node_ports.contains(p) && !planned.contains(p));
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// Allocates what `svc` (a new Service, or an update of `old`) needs, writing the values
    /// into it; the plan is kept only when [`commit`](Self::commit)ted.
    ///
    /// # Errors
    /// The allocator's field errors: an address outside the range or taken, a node port
    /// outside the range or taken, a range that is full.
    pub(crate) fn plan(
        &self,
        svc: &mut Value,
        old: Option<&Value>,
        names: &mut NameGenerator,
    ) -> Result<Plan, Vec<FieldError>> {
        let mut plan = Plan::default();
        let old_ip = old.and_then(cluster_ip).and_then(offset_of);
        let old_ports = old.map(node_ports).unwrap_or_default();
        if needs_cluster_ip(svc) {
            if cluster_ip(svc).is_none() && !is_headless(svc) {
                let offset = self.next_ip(&[], names).ok_or_else(|| {
                    vec![FieldError::invalid(
                        "spec.clusterIPs",
                        json!([]),
                        "failed to allocate a serviceIP: range is full",
                    )]
                })?;
                let spec = child(svc, "spec");
                spec["clusterIP"] = json!(ip_text(offset));
                spec["clusterIPs"] = json!([ip_text(offset)]);
                plan.ips.push(offset);
            } else if let Some(ip) = cluster_ip(svc).map(str::to_owned) {
                if Some(ip.as_str()) != old.and_then(cluster_ip) {
                    let failed = |why: &str| {
                        vec![FieldError::invalid(
                            "spec.clusterIPs",
                            json!([ip]),
                            format!("failed to allocate IP {ip}: {why}"),
                        )]
                    };
                    let offset = offset_of(&ip).ok_or_else(|| {
                        failed("the provided network does not match the current range")
                    })?;
                    if self.ips.contains(&offset) || offset == 1 {
                        return Err(failed("provided IP is already allocated"));
                    }
                    plan.ips.push(offset);
                }
                let spec = child(svc, "spec");
                if items(spec, "clusterIPs").is_empty() {
                    spec["clusterIPs"] = json!([ip]);
                }
            } else {
                child(svc, "spec")["clusterIPs"] = json!(["None"]);
            }
        }
        if let Some(old_ip) = old_ip
            && cluster_ip(svc).and_then(offset_of) != Some(old_ip)
        {
            plan.freed_ips.push(old_ip);
        }
        if needs_node_ports(svc) {
            let mut errors = Vec::new();
            let mut planned = Vec::new();
            for (i, port) in items_mut(child(svc, "spec"), "ports")
                .iter_mut()
                .enumerate()
            {
                let wanted = port.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
                if wanted == 0 {
                    match self.next_node_port(&planned, names) {
                        Some(p) => {
                            port["nodePort"] = json!(p);
                            planned.push(p);
                        }
                        None => errors.push(FieldError::invalid(
                            format!("spec.ports[{i}].nodePort"),
                            0,
                            "failed to allocate a nodePort: range is full",
                        )),
                    }
                    continue;
                }
                if old_ports.contains(&wanted) {
                    continue;
                }
                let field = format!("spec.ports[{i}].nodePort");
                if !NODE_PORTS.contains(&wanted) {
                    errors.push(FieldError::invalid(field, wanted, format!(
                        "provided port is not in the valid range. The range of valid ports is {}-{}",
                        NODE_PORTS.start(), NODE_PORTS.end())));
                } else if self.node_ports.contains(&wanted) || planned.contains(&wanted) {
                    errors.push(FieldError::invalid(
                        field,
                        wanted,
                        "provided port is already allocated",
                    ));
                } else {
                    planned.push(wanted);
                }
            }
            if !errors.is_empty() {
                return Err(errors);
            }
            plan.node_ports = planned;
        }
        let kept = node_ports(svc);
        plan.freed_node_ports = old_ports
            .into_iter()
            .filter(|p| !kept.contains(p))
            .collect();
        Ok(plan)
    }

    /// Keeps what `plan` allocated and gives back what it freed.
    pub(crate) fn commit(&mut self, plan: Plan) {
        self.ips.extend(plan.ips);
        self.node_ports.extend(plan.node_ports);
        for ip in plan.freed_ips {
            self.ips.remove(&ip);
        }
        for port in plan.freed_node_ports {
            self.node_ports.remove(&port);
        }
    }

    /// Gives back the cluster IP and node ports of the removed Service `svc`.
    pub(crate) fn release(&mut self, svc: &Value) {
        if let Some(offset) = cluster_ip(svc).and_then(offset_of) {
            self.ips.remove(&offset);
        }
        for port in node_ports(svc) {
            self.node_ports.remove(&port);
        }
    }
}
