//! A rank's three streams, as ASTRA-sim defines a rank's resources (one CPU op, one GPU
//! compute and one GPU communication in flight at a time), and the stream each kind of node
//! runs on.

use hetsim_chakra::NodeKind;

/// A rank's streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Cpu = 0,
    Gpu = 1,
    Comm = 2,
}

pub const STREAMS: [Stream; 3] = [Stream::Cpu, Stream::Gpu, Stream::Comm];

impl Stream {
    pub fn name(self) -> &'static str {
        match self {
            Stream::Cpu => "cpu",
            Stream::Gpu => "gpu",
            Stream::Comm => "comm",
        }
    }
}

/// The stream a node runs on; `None` for METADATA, which completes as soon as it issues.
/// CPU ops (`is_cpu_op`) of any type run on the CPU stream (PyTorch's `c10d::allreduce_`
/// is the CPU side of a collective whose kernel is a COMM_COLL of its own); GPU
/// computation on the GPU stream; collectives, sends, receives, loads and stores on the
/// communication stream.
pub fn stream_of(kind: NodeKind, is_cpu_op: bool) -> Option<Stream> {
    match kind {
        NodeKind::Metadata => None,
        _ if is_cpu_op => Some(Stream::Cpu),
        NodeKind::Comp => Some(Stream::Gpu),
        NodeKind::CommColl
        | NodeKind::CommSend
        | NodeKind::CommRecv
        | NodeKind::MemLoad
        | NodeKind::MemStore => Some(Stream::Comm),
    }
}
