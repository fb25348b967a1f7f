//! The reader on traces the tests write: every field back, plain and gzip, both schema
//! versions, and each bad case an error naming the file, the rank and the node.

use std::io::Write;
use std::path::{Path, PathBuf};

use hetsim_chakra::proto::{self, AttributeProto, Value};
use hetsim_chakra::writer::{attr, node, trace_bytes, TraceWriter};
use hetsim_chakra::{rank_files, At, NodeKind, Problem, RankReader, TraceNode};
use prost::Message;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hetsim-chakra-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("a temporary folder");
    d
}

fn sample() -> Vec<TraceNode> {
    let mut a = node(7, "gemm", NodeKind::Comp);
    a.duration_micros = 120;
    a.attributes.num_ops = Some(2e9);
    a.attributes.tensor_size = Some(4096.0);
    let mut b = node(9, "allreduce", NodeKind::CommColl);
    b.data_deps = vec![7];
    b.ctrl_deps = vec![3];
    b.attributes.comm_type = Some(0);
    b.attributes.comm_size = Some(1048576.0);
    b.attributes.pg_name = Some("0".to_owned());
    let mut c = node(10, "send", NodeKind::CommSend);
    c.attributes.comm_src = Some(0);
    c.attributes.comm_dst = Some(1);
    c.attributes.comm_tag = Some(5);
    c.attributes.comm_size = Some(64.0);
    let mut d = node(11, "aten::mul", NodeKind::Comp);
    d.attributes.is_cpu_op = true;
    vec![a, b, c, d]
}

fn write(path: &Path, version: &str, nodes: &[TraceNode]) {
    std::fs::write(path, trace_bytes(version, nodes)).expect("writes");
}

fn read(path: &Path, rank: usize) -> Result<Vec<TraceNode>, hetsim_chakra::ChakraError> {
    RankReader::open(path, rank)?.collect()
}

#[test]
fn a_written_trace_reads_back_plain_and_gzipped() {
    let d = dir("roundtrip");
    let plain = d.join("t.0.et");
    write(&plain, "0.0.4", &sample());
    assert_eq!(read(&plain, 0).expect("reads"), sample());
    let bytes = std::fs::read(&plain).expect("reads");
    let gz = d.join("t.1.et");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&bytes).expect("compresses");
    std::fs::write(&gz, enc.finish().expect("compresses")).expect("writes");
    assert_eq!(read(&gz, 1).expect("reads"), sample());
    assert_eq!(rank_files(&d.join("t")).expect("two ranks"), [plain, gz]);
}

#[test]
fn version_1_0_in_a_schema_attribute_reads_and_others_are_refused() {
    let d = dir("versions");
    let meta = proto::GlobalMetadata {
        version: String::new(),
        attr: vec![attr("schema", Value::StringVal("1.0.2-chakra.0.0.4".to_owned()))],
    };
    let mut bytes = meta.encode_length_delimited_to_vec();
    bytes.extend(hetsim_chakra::writer::to_proto(&sample()[0]).encode_length_delimited_to_vec());
    let file = d.join("v.et");
    std::fs::write(&file, &bytes).expect("writes");
    let r = RankReader::open(&file, 0).expect("1.0.2 reads");
    assert_eq!(r.metadata.version, "1.0.2-chakra.0.0.4");
    assert_eq!(r.count(), 1);
    write(&file, "0.0.3", &sample());
    let e = read(&file, 0).expect_err("0.0.3 is refused");
    assert!(
        matches!(e.problem, Problem::Version(ref v) if v == "0.0.3"),
        "{e}"
    );
}

#[test]
fn a_truncated_file_names_the_node_after_the_last_good_one() {
    let d = dir("truncated");
    let file = d.join("cut.3.et");
    write(&file, "0.0.4", &sample());
    let bytes = std::fs::read(&file).expect("reads");
    std::fs::write(&file, &bytes[..bytes.len() - 3]).expect("writes");
    let e = read(&file, 3).expect_err("truncated");
    assert!(matches!(e.problem, Problem::Truncated), "{e}");
    assert_eq!(
        e.at,
        At::Message {
            index: 3,
            after: Some(10)
        }
    );
    let text = e.to_string();
    assert!(
        text.contains("cut.3.et (rank 3), node #3 (after node 10)"),
        "{text}"
    );
}

#[test]
fn an_unknown_node_type_and_a_wrong_wire_type_are_errors_naming_the_node() {
    let d = dir("bad");
    let file = d.join("bad.et");
    let mut w = TraceWriter::new(Vec::new(), "1.0.1").expect("writes");
    w.node(&sample()[0]).expect("writes");
    w.raw(&proto::Node {
        id: 42,
        name: "mystery".to_owned(),
        r#type: 12,
        ..Default::default()
    })
    .expect("writes");
    std::fs::write(&file, w.finish()).expect("writes");
    let e = read(&file, 0).expect_err("type 12");
    assert!(matches!(e.problem, Problem::UnknownNodeType(12)), "{e}");
    assert_eq!(e.at, At::Node(42));

    // Field 1 (id, a varint) written as a length-delimited field: a wrong wire type.
    let mut w = TraceWriter::new(Vec::new(), "1.0.1").expect("writes");
    w.node(&sample()[0]).expect("writes");
    let mut bytes = w.finish();
    let body = [0x0a, 0x01, 0x00];
    bytes.push(body.len() as u8);
    bytes.extend(body);
    std::fs::write(&file, &bytes).expect("writes");
    let e = read(&file, 2).expect_err("wire type");
    assert!(
        matches!(e.problem, Problem::Decode(ref m) if m.contains("wire type")),
        "{e}"
    );
    assert_eq!(
        e.at,
        At::Message {
            index: 1,
            after: Some(7)
        }
    );

    // comm_size as a string: the attribute is named.
    let mut bad = hetsim_chakra::writer::to_proto(&sample()[1]);
    bad.attr.push(AttributeProto {
        name: "comm_size".to_owned(),
        value: Some(Value::StringVal("big".to_owned())),
    });
    let mut w = TraceWriter::new(Vec::new(), "1.0.1").expect("writes");
    w.raw(&bad).expect("writes");
    std::fs::write(&file, w.finish()).expect("writes");
    let e = read(&file, 0).expect_err("a string size");
    assert!(
        e.to_string()
            .contains("node 9: attribute `comm_size`: expected a number"),
        "{e}"
    );
}

#[test]
fn a_prefix_with_a_missing_rank_is_refused() {
    let d = dir("gap");
    write(&d.join("g.0.et"), "0.0.4", &sample());
    write(&d.join("g.2.et"), "0.0.4", &sample());
    let e = rank_files(&d.join("g")).expect_err("rank 1 is missing");
    assert!(e.to_string().contains("rank 1 is missing"), "{e}");
}

#[test]
fn a_bad_process_group_config_or_dtype_is_an_error_naming_the_node() {
    let d = dir("pg");
    let file = d.join("pg.et");
    let mut w = TraceWriter::new(Vec::new(), "1.0.1").expect("writes");
    w.raw(&proto::Node {
        id: 3,
        name: "## process_group:init ##".to_owned(),
        r#type: NodeKind::Metadata.value(),
        inputs: Some(proto::IoInfo {
            values: "['[{\"ranks\": [0, 1]}]']".to_owned(),
            types: "['String']".to_owned(),
        }),
        ..Default::default()
    })
    .expect("writes");
    std::fs::write(&file, w.finish()).expect("writes");
    let e = read(&file, 0).expect_err("a group without a name");
    assert_eq!(e.at, At::Node(3));
    assert!(e.to_string().contains("without `pg_name`"), "{e}");

    let mut bad = node(4, "gemm", NodeKind::Comp);
    bad.attributes.num_ops = Some(1.0);
    let mut wire = hetsim_chakra::writer::to_proto(&bad);
    wire.attr.push(attr("dtype", Value::StringVal("int4".to_owned())));
    let mut w = TraceWriter::new(Vec::new(), "1.0.1").expect("writes");
    w.raw(&wire).expect("writes");
    std::fs::write(&file, w.finish()).expect("writes");
    let e = read(&file, 0).expect_err("an unknown type");
    assert_eq!(e.at, At::Node(4));
    assert!(e.to_string().contains("attribute `dtype`: expected fp64"), "{e}");
}
