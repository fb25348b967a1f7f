//! Writes traces in the reader's format: for tests and for the example traces the project
//! ships (hetsim writes no traces of runs).

use std::io::Write;

use prost::Message;

use crate::node::{NodeKind, TraceNode};
use crate::proto::{self, AttributeProto, Value};

/// A named scalar attribute.
pub fn attr(name: &str, value: Value) -> AttributeProto {
    AttributeProto {
        name: name.to_owned(),
        value: Some(value),
    }
}

/// A trace being written: the metadata first, then nodes, each framed by its length.
pub struct TraceWriter<W: Write> {
    out: W,
}

impl<W: Write> TraceWriter<W> {
    /// Starts a trace of schema `version` ("0.0.4", "1.0.1", ...) on `out`.
    pub fn new(mut out: W, version: &str) -> std::io::Result<Self> {
        out.write_all(&metadata(version).encode_length_delimited_to_vec())?;
        Ok(TraceWriter { out })
    }

    /// Writes a node as the wire has it (any type value, any attributes).
    pub fn raw(&mut self, node: &proto::Node) -> std::io::Result<()> {
        self.out.write_all(&node.encode_length_delimited_to_vec())
    }

    /// Writes `node`, its attributes under their conventional names.
    pub fn node(&mut self, node: &TraceNode) -> std::io::Result<()> {
        self.raw(&to_proto(node))
    }

    pub fn finish(self) -> W {
        self.out
    }
}

/// The metadata a trace of schema `version` starts with.
fn metadata(version: &str) -> proto::GlobalMetadata {
    proto::GlobalMetadata {
        version: version.to_owned(),
        attr: Vec::new(),
    }
}

/// A whole rank file of schema `version` holding `nodes` in order, as [`TraceWriter`] writes
/// it.
pub fn trace_bytes(version: &str, nodes: &[TraceNode]) -> Vec<u8> {
    let mut out = metadata(version).encode_length_delimited_to_vec();
    for node in nodes {
        out.extend(to_proto(node).encode_length_delimited_to_vec());
    }
    out
}

/// The wire form of `node`.
pub fn to_proto(node: &TraceNode) -> proto::Node {
    let a = &node.attributes;
    let mut attrs = vec![attr("is_cpu_op", Value::BoolVal(a.is_cpu_op))];
    let ints = [
        ("comm_type", a.comm_type),
        ("comm_src", a.comm_src),
        ("comm_dst", a.comm_dst),
        ("comm_tag", a.comm_tag),
    ];
    let numbers = [
        ("num_ops", a.num_ops),
        ("tensor_size", a.tensor_size),
        ("comm_size", a.comm_size),
    ];
    attrs.extend(
        numbers
            .into_iter()
            .filter_map(|(n, v)| v.map(|v| attr(n, Value::Uint64Val(v as u64)))),
    );
    attrs.extend(
        ints.into_iter()
            .filter_map(|(n, v)| v.map(|v| attr(n, Value::Int64Val(v)))),
    );
    if let Some(pg) = &a.pg_name {
        attrs.push(attr("pg_name", Value::StringVal(pg.clone())));
    }
    if let Some(dtype) = a.dtype {
        attrs.push(attr("dtype", Value::StringVal(dtype.name().to_owned())));
    }
    proto::Node {
        id: node.id,
        name: node.name.clone(),
        r#type: node.kind.value(),
        ctrl_deps: node.ctrl_deps.clone(),
        data_deps: node.data_deps.clone(),
        duration_micros: node.duration_micros,
        inputs: None,
        attr: attrs,
    }
}

/// A node of `kind` with no dependencies, no duration and no attributes: start of a
/// builder chain in tests.
pub fn node(id: u64, name: &str, kind: NodeKind) -> TraceNode {
    TraceNode {
        id,
        name: name.to_owned(),
        kind,
        data_deps: Vec::new(),
        ctrl_deps: Vec::new(),
        duration_micros: 0,
        attributes: Default::default(),
    }
}

/// A CPU op (`is_cpu_op`) named `name` that took `micros` µs, with no dependencies.
pub fn cpu_op(id: u64, name: &str, micros: u64) -> TraceNode {
    let mut op = node(id, name, NodeKind::Comp);
    op.attributes.is_cpu_op = true;
    op.duration_micros = micros;
    op
}
