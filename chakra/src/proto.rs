//! The messages of Chakra's `et_def.proto` (package `ChakraProtoMsg`, mlcommons/chakra,
//! schema/protobuf/et_def.proto) as prost derives on hand-written structs, so that no build
//! step needs `protoc`.
//!
//! Only the fields a replay reads are declared: protobuf skips the others by their wire
//! type, so a node's `outputs`, its inputs' shapes, `start_time_micros` and list-valued
//! attributes are read past, never held. Of `inputs`, the values and types are decoded
//! with the node and dropped once read: the types give a kernel's data type, a METADATA
//! node's values its process groups (crate::dtype, crate::groups). The field numbers are the schema's; a field whose wire type
//! disagrees with its number here is a decode error (a corrupted or foreign file).
//!
//! Schema versions: 0.0.4 and 1.0.x share this wire format (0.0.4 added
//! `GlobalMetadata.version`; 1.0.x traces written by Chakra's converters carry their version
//! in a `schema` attribute of the metadata instead, e.g. "1.0.2-chakra.0.0.4").

/// The first message of a trace.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GlobalMetadata {
    #[prost(string, tag = "1")]
    pub version: String,
    #[prost(message, repeated, tag = "2")]
    pub attr: Vec<AttributeProto>,
}

/// One node of the execution trace.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Node {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(string, tag = "2")]
    pub name: String,
    /// `NodeType` (an enum is an int32 on the wire).
    #[prost(int32, tag = "3")]
    pub r#type: i32,
    #[prost(uint64, repeated, tag = "4")]
    pub ctrl_deps: Vec<u64>,
    #[prost(uint64, repeated, tag = "5")]
    pub data_deps: Vec<u64>,
    #[prost(uint64, tag = "7")]
    pub duration_micros: u64,
    #[prost(message, optional, tag = "8")]
    pub inputs: Option<IoInfo>,
    #[prost(message, repeated, tag = "10")]
    pub attr: Vec<AttributeProto>,
}

/// A node's inputs as Chakra's PyTorch converter writes them (`IOInfo`): Python's text of
/// PyTorch's lists, e.g. values `['[{"pg_name": "0", ...}]']`, types
/// `['Tensor(c10::BFloat16)', 'Int']`. The shapes (field 2) are skipped.
#[derive(Clone, PartialEq, prost::Message)]
pub struct IoInfo {
    #[prost(string, tag = "1")]
    pub values: String,
    #[prost(string, tag = "3")]
    pub types: String,
}

/// A named attribute; list values (fields 4, 6, ... 32) are skipped.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(oneof = "Value", tags = "3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29")]
    pub value: Option<Value>,
}

/// The scalar values of `AttributeProto.value`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Value {
    #[prost(double, tag = "3")]
    DoubleVal(f64),
    #[prost(float, tag = "5")]
    FloatVal(f32),
    #[prost(int32, tag = "7")]
    Int32Val(i32),
    #[prost(int64, tag = "9")]
    Int64Val(i64),
    #[prost(uint32, tag = "11")]
    Uint32Val(u32),
    #[prost(uint64, tag = "13")]
    Uint64Val(u64),
    #[prost(sint32, tag = "15")]
    Sint32Val(i32),
    #[prost(sint64, tag = "17")]
    Sint64Val(i64),
    #[prost(fixed32, tag = "19")]
    Fixed32Val(u32),
    #[prost(fixed64, tag = "21")]
    Fixed64Val(u64),
    #[prost(sfixed32, tag = "23")]
    Sfixed32Val(i32),
    #[prost(sfixed64, tag = "25")]
    Sfixed64Val(i64),
    #[prost(bool, tag = "27")]
    BoolVal(bool),
    #[prost(string, tag = "29")]
    StringVal(String),
}

impl Value {
    /// An integer-valued attribute as i64 (a bool as 0 or 1; a float rounded toward zero
    /// only when it is whole).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int32Val(v) | Value::Sint32Val(v) | Value::Sfixed32Val(v) => Some(i64::from(v)),
            Value::Int64Val(v) | Value::Sint64Val(v) | Value::Sfixed64Val(v) => Some(v),
            Value::Uint32Val(v) | Value::Fixed32Val(v) => Some(i64::from(v)),
            Value::Uint64Val(v) | Value::Fixed64Val(v) => i64::try_from(v).ok(),
            Value::BoolVal(b) => Some(i64::from(b)),
            Value::DoubleVal(x) if x.fract() == 0.0 && x.abs() < 9.0e18 => Some(x as i64),
            Value::FloatVal(x) if x.fract() == 0.0 && x.abs() < 9.0e18 => Some(x as i64),
            _ => None,
        }
    }

    /// A numeric attribute as f64.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::DoubleVal(x) => Some(x),
            Value::FloatVal(x) => Some(f64::from(x)),
            Value::Uint64Val(v) | Value::Fixed64Val(v) => Some(v as f64),
            _ => self.as_i64().map(|v| v as f64),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::BoolVal(b) => Some(b),
            _ => self.as_i64().map(|v| v != 0),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::StringVal(s) => Some(s),
            _ => None,
        }
    }
}

/// `NodeType` of the schema.
pub mod node_type {
    pub const INVALID: i32 = 0;
    pub const METADATA: i32 = 1;
    pub const MEM_LOAD: i32 = 2;
    pub const MEM_STORE: i32 = 3;
    pub const COMP: i32 = 4;
    pub const COMM_SEND: i32 = 5;
    pub const COMM_RECV: i32 = 6;
    pub const COMM_COLL: i32 = 7;
}

/// `CollectiveCommType` of the schema.
pub mod comm_type {
    pub const ALL_REDUCE: i64 = 0;
    pub const REDUCE: i64 = 1;
    pub const ALL_GATHER: i64 = 2;
    pub const GATHER: i64 = 3;
    pub const SCATTER: i64 = 4;
    pub const BROADCAST: i64 = 5;
    pub const ALL_TO_ALL: i64 = 6;
    pub const REDUCE_SCATTER: i64 = 7;
    pub const REDUCE_SCATTER_BLOCK: i64 = 8;
    pub const BARRIER: i64 = 9;
}
