//! A trace node as a replay holds it: its identity, dependencies, recorded duration and the
//! attributes with conventional names, decoded once from the wire's attribute list.

use crate::dtype::DataType;
use crate::proto::{self, node_type, Value};

/// The kind of a node (`NodeType` without INVALID, which is refused on reading).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Metadata,
    MemLoad,
    MemStore,
    Comp,
    CommSend,
    CommRecv,
    CommColl,
}

impl NodeKind {
    /// The kind of a wire value, or `None` for INVALID_NODE and values the schema lacks.
    pub fn of(value: i32) -> Option<Self> {
        Some(match value {
            node_type::METADATA => NodeKind::Metadata,
            node_type::MEM_LOAD => NodeKind::MemLoad,
            node_type::MEM_STORE => NodeKind::MemStore,
            node_type::COMP => NodeKind::Comp,
            node_type::COMM_SEND => NodeKind::CommSend,
            node_type::COMM_RECV => NodeKind::CommRecv,
            node_type::COMM_COLL => NodeKind::CommColl,
            _ => return None,
        })
    }

    /// The wire value.
    pub fn value(self) -> i32 {
        match self {
            NodeKind::Metadata => node_type::METADATA,
            NodeKind::MemLoad => node_type::MEM_LOAD,
            NodeKind::MemStore => node_type::MEM_STORE,
            NodeKind::Comp => node_type::COMP,
            NodeKind::CommSend => node_type::COMM_SEND,
            NodeKind::CommRecv => node_type::COMM_RECV,
            NodeKind::CommColl => node_type::COMM_COLL,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Metadata => "METADATA",
            NodeKind::MemLoad => "MEM_LOAD",
            NodeKind::MemStore => "MEM_STORE",
            NodeKind::Comp => "COMP",
            NodeKind::CommSend => "COMM_SEND",
            NodeKind::CommRecv => "COMM_RECV",
            NodeKind::CommColl => "COMM_COLL",
        }
    }
}

/// The attributes a replay reads, by their conventional names; absent ones are `None`
/// (`is_cpu_op` false).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attributes {
    pub is_cpu_op: bool,
    pub num_ops: Option<f64>,
    pub tensor_size: Option<f64>,
    pub comm_type: Option<i64>,
    pub comm_size: Option<f64>,
    pub comm_src: Option<i64>,
    pub comm_dst: Option<i64>,
    pub comm_tag: Option<i64>,
    pub pg_name: Option<String>,
    /// The data type of a compute (crate::dtype): its `dtype` attribute, else its first
    /// floating-point input tensor's type.
    pub dtype: Option<DataType>,
}

/// One node, as much of it as a replay needs.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceNode {
    pub id: u64,
    pub name: String,
    pub kind: NodeKind,
    pub data_deps: Vec<u64>,
    pub ctrl_deps: Vec<u64>,
    pub duration_micros: u64,
    pub attributes: Attributes,
}

/// A problem with one attribute: its name and what was wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct BadAttribute {
    pub name: String,
    pub why: &'static str,
}

impl Attributes {
    /// The known attributes of `attrs`; unknown names are ignored. A known name with a
    /// value of the wrong type is an error (`comm_size` as a string, say).
    pub fn read(attrs: &[proto::AttributeProto]) -> Result<Self, BadAttribute> {
        let mut out = Attributes::default();
        for a in attrs {
            let Some(value) = &a.value else { continue };
            let bad = |why| BadAttribute {
                name: a.name.clone(),
                why,
            };
            let number = |v: &Value| v.as_f64().ok_or_else(|| bad("expected a number"));
            let integer = |v: &Value| v.as_i64().ok_or_else(|| bad("expected an integer"));
            match a.name.as_str() {
                "is_cpu_op" => out.is_cpu_op = value.as_bool().ok_or_else(|| bad("expected a bool"))?,
                "num_ops" => out.num_ops = Some(number(value)?),
                "tensor_size" => out.tensor_size = Some(number(value)?),
                "comm_type" => out.comm_type = Some(integer(value)?),
                "comm_size" => out.comm_size = Some(number(value)?),
                "comm_src" => out.comm_src = Some(integer(value)?),
                "comm_dst" => out.comm_dst = Some(integer(value)?),
                "comm_tag" => out.comm_tag = Some(integer(value)?),
                "dtype" => {
                    let text = value.as_str().ok_or_else(|| bad("expected a string"))?;
                    out.dtype = Some(DataType::parse(text).ok_or_else(|| {
                        bad("expected fp64, fp32, tf32, fp16, bf16, fp8 or PyTorch's name of one")
                    })?);
                }
                "pg_name" => {
                    out.pg_name = Some(match value {
                        Value::StringVal(s) => s.clone(),
                        other => integer(other)?.to_string(),
                    })
                }
                _ => {}
            }
        }
        Ok(out)
    }
}
