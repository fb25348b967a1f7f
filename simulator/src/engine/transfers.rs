//! Messages on the links.
//!
//! A message crosses its route hop by hop (store and forward). On each hop the link's model
//! gives `t(bytes)`; the first `t(0)` (the startup) the message takes alone, then its bytes
//! share the link direction's bandwidth with the others crossing it
//! ([`crate::sharing::Shared`], capacity `channels`), needing `t(bytes) − t(0)` seconds at
//! full rate. A message alone on a link thus takes `t(bytes)`, as the thesis's model says.

use std::rc::Rc;

use super::{finite_non_negative, Engine, EventKind};
use crate::error::SimError;
use crate::platform::{Direction, Hop, HostMemory, LinkId};
use crate::process::{Handle, Message, Process};
use crate::results::SpanKind;
use crate::uncertainty::Estimate;
use crate::Pid;

/// A message on its way (boxed in the event and link queues, which move their entries).
pub(crate) struct InFlight {
    message: Message,
    /// The isend's handle, completed at delivery.
    handle: Option<Handle>,
    route: Rc<[Hop]>,
    /// The hop it is on.
    hop: usize,
    direction: Direction,
    host_memory: HostMemory,
    /// When it started the hop it is on.
    hop_started: f64,
    /// Seconds at the link's full rate its bytes need on this hop.
    work: f64,
}

impl InFlight {
    fn link(&self) -> (LinkId, usize) {
        let Hop { link, forward } = self.route[self.hop];
        (link, usize::from(!forward))
    }
}

impl<P: Process> Engine<'_, P> {
    pub(super) fn send(
        &mut self,
        from: Pid,
        to: Pid,
        bytes: f64,
        direction: Option<Direction>,
        host_memory: HostMemory,
        handle: Option<Handle>,
    ) -> Result<(), SimError> {
        if to >= self.placements.len() {
            return Err(self.invalid(
                from,
                format!(
                    "send to pid {to}, but the run has pids 0 to {}",
                    self.placements.len() - 1
                ),
            ));
        }
        let bytes = self.checked_request(from, bytes, "a message size [bytes]")?;
        let now = self.now();
        let message = Message {
            from,
            to,
            bytes,
            sent: now,
            arrived: now,
            spread: self.states[from].spread,
        };
        let (a, b) = (self.placements[from].node, self.placements[to].node);
        // Same node, or a pure synchronization (thesis Table 5.1): no link time.
        let instant = a == b || bytes == 0.0;
        let route = if instant {
            Rc::from([])
        } else {
            self.platform.route(a, b)?
        };
        let kinds = (self.platform.nodes[a].kind, self.platform.nodes[b].kind);
        let transfer = Box::new(InFlight {
            message,
            handle,
            route,
            hop: 0,
            direction: direction.unwrap_or_else(|| Direction::between(kinds.0, kinds.1)),
            host_memory,
            hop_started: now,
            work: 0.0,
        });
        if instant {
            self.events.schedule(now, EventKind::Deliver(transfer));
            return Ok(());
        }
        self.start_hop(transfer)
    }

    /// The link model's time for `transfer` on its hop, checked.
    fn link_time(&mut self, transfer: &InFlight, bytes: f64) -> Result<Estimate, SimError> {
        let (link, _) = transfer.link();
        let estimate = self
            .timing
            .transfer_time(link, bytes, transfer.direction, transfer.host_memory)
            .map_err(|e| self.link_error(link, e))?;
        finite_non_negative(estimate.seconds, "transfer_time [s]")
            .and_then(|_| finite_non_negative(estimate.uncertainty, "transfer_time's uncertainty [s]"))
            .map_err(|e| self.link_error(link, e))?;
        Ok(estimate)
    }

    fn link_error(&self, link: LinkId, message: String) -> SimError {
        SimError::Link {
            who: self.link_name(link),
            time: self.now(),
            message,
        }
    }

    /// Puts `transfer` on its hop now: its startup, then its bytes join the link.
    fn start_hop(&mut self, mut transfer: Box<InFlight>) -> Result<(), SimError> {
        let whole = self.link_time(&transfer, transfer.message.bytes)?;
        let startup = self.link_time(&transfer, 0.0)?.seconds.min(whole.seconds);
        transfer.message.spread = transfer.message.spread.widened(whole.uncertainty);
        transfer.hop_started = self.now();
        transfer.work = whole.seconds - startup;
        if startup > 0.0 {
            self.events
                .schedule(self.now() + startup, EventKind::Started(transfer));
        } else {
            self.join_link(transfer);
        }
        Ok(())
    }

    pub(super) fn join_link(&mut self, transfer: Box<InFlight>) {
        let (link, direction) = transfer.link();
        let now = self.now();
        let resource = &mut self.links[link][direction];
        resource.shared.join(now, transfer.work, transfer);
        resource.reschedule(&mut self.events, EventKind::LinkFinish(link, direction));
        self.slow_duplex(link);
    }

    /// Slows each direction of `link` to its `duplex` fraction while the other carries bytes
    /// (and back to full speed when it stops).
    fn slow_duplex(&mut self, link: LinkId) {
        let duplex = self.platform.links[link].duplex;
        if duplex == 1.0 {
            return;
        }
        let now = self.now();
        let busy = self.links[link].each_ref().map(|r| r.shared.is_busy());
        for direction in 0..2 {
            let speed = if busy[1 - direction] { duplex } else { 1.0 };
            let resource = &mut self.links[link][direction];
            if resource.shared.set_speed(now, speed) {
                resource.reschedule(&mut self.events, EventKind::LinkFinish(link, direction));
            }
        }
    }

    pub(super) fn link_finish(&mut self, link: LinkId, direction: usize) -> Result<(), SimError> {
        let now = self.now();
        let resource = &mut self.links[link][direction];
        resource.finish = None;
        let done = resource.shared.finish_due(now);
        resource.reschedule(&mut self.events, EventKind::LinkFinish(link, direction));
        self.slow_duplex(link);
        for transfer in done {
            self.hop_done(transfer)?;
        }
        Ok(())
    }

    /// Store and forward: the next hop starts when the previous one ends.
    fn hop_done(&mut self, mut transfer: Box<InFlight>) -> Result<(), SimError> {
        if self.trace.is_some() {
            let (link, _) = transfer.link();
            let m = &transfer.message;
            let detail = format!("{} bytes to pid {} over {}", m.bytes, m.to, self.link_name(link));
            let during = [transfer.hop_started, self.now()];
            self.span(m.from, SpanKind::Send, during, 0.0, || detail);
        }
        transfer.hop += 1;
        if transfer.hop == transfer.route.len() {
            return self.deliver(*transfer);
        }
        self.start_hop(transfer)
    }

    fn link_name(&self, link: LinkId) -> String {
        let [a, b] = self.platform.links[link].between;
        format!(
            "link `{}`–`{}`",
            self.platform.nodes[a].id, self.platform.nodes[b].id
        )
    }

    pub(super) fn deliver(&mut self, transfer: InFlight) -> Result<(), SimError> {
        let InFlight {
            mut message, handle, ..
        } = transfer;
        message.arrived = self.now();
        if let Some(handle) = handle {
            self.complete(handle, None)?;
        }
        self.arrive(message)
    }
}
