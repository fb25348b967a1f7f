//! System files as users write them: the published JSON Schema, the messages of files that
//! break it, and link parameters checked when a system is loaded.

use std::path::{Path, PathBuf};

use hetsim_system::{system_schema, SystemFile};

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Every `.toml` file under `examples/`: all of them are system files.
fn example_system_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "toml") && !path.ends_with("benchset.toml") {
                // benchset.toml describes a benchmark set (docs/BENCHMARK-SETS.md), no system.
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(&repo().join("examples"), &mut found);
    found.sort();
    found
}

#[test]
fn the_published_schema_is_the_one_generated_from_the_system_types() {
    let published = repo().join("docs/schema/system.schema.json");
    let generated = serde_json::to_string_pretty(&system_schema()).unwrap() + "\n";
    if std::env::var_os("HETSIM_BLESS").is_some() {
        std::fs::write(&published, &generated).unwrap();
    }
    let text = std::fs::read_to_string(&published).unwrap_or_default();
    assert!(
        text == generated,
        "{} differs from the schema of SystemFile; rewrite it with HETSIM_BLESS=1 cargo test -p hetsim-system --test system_files",
        published.display()
    );
}

#[test]
fn every_example_system_file_validates_as_toml_and_as_json() {
    let files = example_system_files();
    assert!(files.len() >= 9, "{files:?}");
    for path in files {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let file = SystemFile::parse(&text, &origin).unwrap_or_else(|e| panic!("{e}"));
        let json = serde_json::to_string(&file).unwrap();
        assert_eq!(SystemFile::parse(&json, &origin), Ok(file), "{origin} as JSON");
    }
}

/// The error of parsing `toml` as `bad.toml`.
fn parse_error(toml: &str) -> String {
    SystemFile::parse(toml, "bad.toml").unwrap_err().to_string()
}

const NODES: &str = r#"
    [[node]]
    id = "a"
    component = "Intel Core i7-4790K"
    model = "cpu-flops"
    labels = { P = 1 }
    [[node]]
    id = "b"
    component = "Intel Core i7-4790K"
    model = "cpu-flops"
    labels = { Q = 1 }
"#;

#[test]
fn schema_messages_name_the_file_the_line_the_path_and_what_was_expected() {
    let err = parse_error(&format!(
        "{NODES}[[link]]\nbetween = [\"a\", \"b\"]\ncomponent = \"PCIe 4.0 x16\"\nchannels = 0\n"
    ));
    assert_eq!(
        err,
        "bad.toml:15: link[0].channels: 0 is less than the minimum of 1"
    );
    let err = parse_error(&NODES.replace("labels = { Q = 1 }", "cout = 2"));
    assert!(
        err.starts_with("bad.toml:11: node[1]: ") && err.contains("'cout' was unexpected"),
        "{err}"
    );
    let err = parse_error(&NODES.replace("labels = { Q = 1 }", "count = 0"));
    assert_eq!(err, "bad.toml:11: node[1].count: 0 is less than the minimum of 1");
    let err = parse_error(
        "[[component]]\nname = \"x\"\nkind = \"NETWORK\"\nattributes = { bandwidth = true }\n[[node]]\nid = \"a\"\ncomponent = \"x\"\nmodel = \"cpu-flops\"\n",
    );
    assert!(
        err.starts_with("bad.toml:4: component[0].attributes.bandwidth: ")
            && err.contains("\"number\", \"string\""),
        "{err}"
    );
    let err = parse_error("name = \"no nodes\"\n");
    assert_eq!(
        err,
        "bad.toml: (top level): a system needs a [[node]] or a [[cluster]]"
    );
    // JSON names the same paths.
    let err = SystemFile::parse(
        r#"{"node": [{"id": "a", "component": "c", "model": 7}]}"#,
        "bad.json",
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("bad.json: node[0].model: "), "{err}");
}

/// A system whose one link, between `a` and `b`, uses an inline component with `attributes`
/// and, when given, the link's own `extra` fields.
fn link_system(attributes: &str, extra: &str) -> String {
    format!(
        "{NODES}[[component]]\nname = \"wire\"\nkind = \"NETWORK\"\nattributes = {{ {attributes} }}\n\
         [[link]]\nbetween = [\"a\", \"b\"]\ncomponent = \"wire\"\n{extra}\n"
    )
}

#[test]
fn bad_link_parameters_fail_when_the_system_is_parsed() {
    let good = "bandwidth = 1e9, startup = 1e-6, lambda = 0.9";
    assert!(SystemFile::parse(&link_system(good, ""), "good.toml").is_ok());
    let link = "bad.toml:16: link[0] `a`–`b`, component `wire`: ";
    for (attributes, expected) in [
        ("bandwidth = 0", "key `bandwidth`: expected a number > 0, got 0"),
        (
            "bandwidth = -1e9",
            "key `bandwidth`: expected a number > 0, got -1000000000",
        ),
        (
            "bandwidth = 1e9, startup = -1e-6",
            "key `startup`: expected a number >= 0, got -0.000001",
        ),
        (
            "bandwidth = 1e9, startupHtD = -1",
            "key `startupHtD`: expected a number >= 0, got -1",
        ),
        (
            "bandwidth = 1e9, latency = -1",
            "key `latency`: expected a number >= 0, got -1",
        ),
        (
            "bandwidth = 1e9, lambda = 1.5",
            "key `lambda`: expected a fraction in (0, 1], got 1.5",
        ),
        (
            "bandwidth = 1e9, lambdaDtH = 0",
            "key `lambdaDtH`: expected a fraction in (0, 1], got 0",
        ),
        (
            "bandwidth = 1e9, duplex = 0",
            "`duplex` is 0, expected a fraction in (0, 1]",
        ),
        (
            "bandwidth = 1e9, channels = 2.5",
            "`channels` is 2.5, expected a whole number >= 1",
        ),
        (
            "bandwidth = 1e9, channels = 0",
            "`channels` is 0, expected a whole number >= 1",
        ),
        (
            "bandwidth = \"fast\"",
            "key `bandwidth`: expected a finite number, got \"fast\"",
        ),
        (
            "bandwidth = 1e9, pageableHtD = \"1:x\"",
            "key `pageableHtD`: expected knots SIZE:BANDWIDTH ...",
        ),
    ] {
        let err = parse_error(&link_system(attributes, ""));
        assert!(
            err.starts_with(&format!("{link}{expected}")),
            "{attributes}: {err}"
        );
    }
    // TOML's nan and inf are no numbers a rate or a time can be.
    for (value, shown) in [("nan", "NaN"), ("inf", "inf"), ("-inf", "-inf")] {
        let err = parse_error(&link_system(&format!("bandwidth = {value}"), ""));
        assert_eq!(
            err,
            format!("bad.toml:15: component[0].attributes.bandwidth: {shown} is not a finite number")
        );
    }
    let err = parse_error(&link_system(good, "").replace("[\"a\", \"b\"]", "[\"a\", \"bb\"]"));
    assert_eq!(
        err,
        "bad.toml:17: link[0] `a`–`bb`: unknown node `bb`; did you mean `b`?"
    );
}

#[test]
fn bad_link_parameters_of_a_catalog_component_fail_when_the_system_is_resolved() {
    // The catalog's PCIe 4.0 x16 is fine; a file's link stating 0 channels over it is
    // not, and neither is a system whose inline component is only known once resolved.
    let system = format!("{NODES}[[link]]\nbetween = [\"a\", \"b\"]\ncomponent = \"PCIe 4.0 x16\"\n");
    let file = SystemFile::parse(&system, "ok.toml").unwrap();
    assert!(file.clone().resolve("ok.toml", None).is_ok());
    let mut bad = file;
    bad.links[0].channels = Some(0);
    let err = bad.resolve("bad.toml", None).unwrap_err().to_string();
    assert_eq!(
        err,
        "bad.toml: link[0] `a`–`b`, component `PCIe 4.0 x16`: `channels` is 0, expected a whole number >= 1"
    );
}

#[test]
fn errors_say_where_they_are_besides_their_text() {
    // A TOML syntax error: the line and column TOML's message names.
    let err = SystemFile::parse("name = \"x\"\n[[node]]\nid = \n", "bad.toml").unwrap_err();
    assert_eq!(err.origin.as_deref(), Some("bad.toml"));
    assert_eq!((err.line(), err.column()), (Some(3), Some(6)), "{err}");
    assert!(err.to_string().contains("line 3, column 6"), "{err}");
    // A JSON syntax error too.
    let err = SystemFile::parse("{\"node\": [\n  {\"id\": }]}", "bad.json").unwrap_err();
    assert_eq!(err.line(), Some(2), "{err}");
    // A schema violation names its path; further ones follow on lines of their own.
    let err = SystemFile::parse(
        &NODES
            .replace("labels = { Q = 1 }", "count = 0")
            .replace("model = \"cpu-flops\"", "model = 7"),
        "bad.toml",
    )
    .unwrap_err();
    assert_eq!(err.path.as_deref(), Some("node[0].model"), "{err}");
    assert_eq!(err.more.len(), 2, "{err}");
    assert_eq!(err.to_string().lines().count(), 3, "{err}");
    // A link's error names the link, in the file and in its text.
    let err = SystemFile::parse(&link_system("bandwidth = 0", ""), "bad.toml").unwrap_err();
    assert_eq!(err.path.as_deref(), Some("link[0]"));
    assert!(
        err.message.starts_with("link[0] `a`–`b`, component `wire`: "),
        "{err}"
    );
}

#[test]
fn system_errors_suggest_the_closest_name() {
    let parse = |text: &str| {
        SystemFile::parse(text, "s.toml")
            .and_then(|f| f.resolve("s.toml", None))
            .map_err(String::from)
    };
    let err = parse("[[node]]\nid = \"g\"\ncomponent = \"GTX 907 - gajger\"\nmodel = \"gpu-volkov\"\n")
        .unwrap_err();
    assert!(
        err.contains("unknown component `GTX 907 - gajger`; did you mean `GTX 970 - gajger`?"),
        "{err}"
    );
    let err = parse("[[node]]\nid = \"g\"\ncomponent = \"GTX 970 - gajger\"\nmodel = \"gpu-volkof\"\n")
        .unwrap_err();
    assert!(
        err.contains("unknown model `gpu-volkof`; did you mean `gpu-volkov`?"),
        "{err}"
    );
    let err = parse(
        "[[node]]\nid = \"gpu\"\ncomponent = \"GTX 970 - gajger\"\nmodel = \"gpu-volkov\"\n\
         [[link]]\nbetween = [\"gpu\", \"hots\"]\ncomponent = \"PCIe 4.0 x16\"\n",
    )
    .unwrap_err();
    assert!(err.contains("unknown node `hots`"), "{err}");
    let err = parse("[[node]]\nid = \"g\"\ncomponent = \"x\"\nmodle = \"y\"\n").unwrap_err();
    assert!(err.starts_with("s.toml:") && err.contains("modle"), "{err}");
}
