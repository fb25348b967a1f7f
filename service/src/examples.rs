//! The shipped examples (the repository's `examples/`), built into the binary so that an
//! empty server can store them with one click or `hetsim serve --examples`: each app, and
//! each system with its SASS inlined (the server reads no file).

use hetsim_system::self_contained_toml;

use crate::storage::{Library, Named, Store, StoreError};

/// One example: an app and the systems it runs on (as `(file, text)`).
pub struct Example {
    /// The app's name once stored.
    pub app: &'static str,
    pub source: &'static str,
    pub systems: &'static [(&'static str, &'static str)],
}

/// Every example a fresh server offers, the thesis's first.
pub const EXAMPLES: &[Example] = &[
    Example {
        app: "saxpy2",
        source: include_str!("../../examples/gajger/app.rhai"),
        systems: &[
            (
                "gajger/gtx970.toml",
                include_str!("../../examples/gajger/gtx970.toml"),
            ),
            (
                "gajger/titanx.toml",
                include_str!("../../examples/gajger/titanx.toml"),
            ),
        ],
    },
    Example {
        app: "master-worker",
        source: include_str!("../../examples/master-worker/app.rhai"),
        systems: &[(
            "master-worker/system.toml",
            include_str!("../../examples/master-worker/system.toml"),
        )],
    },
    Example {
        app: "multi-gpu",
        source: include_str!("../../examples/multi-gpu/app.rhai"),
        systems: &[(
            "multi-gpu/system.toml",
            include_str!("../../examples/multi-gpu/system.toml"),
        )],
    },
    Example {
        app: "training-8gpu",
        source: include_str!("../../examples/training-8gpu/app.rhai"),
        systems: &[(
            "training-8gpu/system.toml",
            include_str!("../../examples/training-8gpu/system.toml"),
        )],
    },
    Example {
        app: "dumbbell",
        source: include_str!("../../examples/dumbbell/app.rhai"),
        systems: &[(
            "dumbbell/system.toml",
            include_str!("../../examples/dumbbell/system.toml"),
        )],
    },
];

/// The files the examples' systems name, by their path from `examples/`.
const FILES: &[(&str, &str)] = &[(
    "kernels/saxpy2-figure-5-2.sass",
    include_str!("../../examples/kernels/saxpy2-figure-5-2.sass"),
)];

/// What [`load`] stored: names of apps and systems (those stored before are kept as they are).
#[derive(Debug, Default, PartialEq)]
pub struct Loaded {
    pub apps: Vec<String>,
    pub systems: Vec<String>,
}

/// Stores every example's app and systems that `store` does not hold by name yet.
pub async fn load(store: &Store) -> Result<Loaded, StoreError> {
    let mut loaded = Loaded::default();
    for example in EXAMPLES {
        let app = Named {
            id: String::new(),
            name: example.app.to_owned(),
            body: example.source.to_owned(),
        };
        if store_new(store, Library::Apps, &app).await? {
            loaded.apps.push(app.name);
        }
        for (file, text) in example.systems {
            let system = system(file, text)?;
            if store_new(store, Library::Systems, &system).await? {
                loaded.systems.push(system.name);
            }
        }
    }
    Ok(loaded)
}

/// The system file `file` as a server stores it, named by its `name` field.
fn system(file: &str, text: &str) -> Result<Named, hetsim_system::SystemError> {
    let folder = file.rsplit_once('/').map_or("", |(folder, _)| folder);
    let read = |path: &str| {
        let from_examples = normalise(&format!("{folder}/{path}"));
        FILES
            .iter()
            .find(|(name, _)| *name == from_examples)
            .map(|(_, text)| (*text).to_owned())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "not built in"))
    };
    let body = self_contained_toml(text, file, read)?;
    let name = hetsim_system::SystemFile::parse(&body, file)?.name;
    Ok(Named {
        id: String::new(),
        name,
        body,
    })
}

/// `a/../b` as `b`.
fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            part => parts.push(part),
        }
    }
    parts.join("/")
}

/// Stores `item` unless an item of its name is stored; false where one was (two loads at
/// once: the database's unique name decides, and the second is no error).
async fn store_new(store: &Store, library: Library, item: &Named) -> Result<bool, StoreError> {
    if !store.named(library, None, Some(&item.name)).await?.is_empty() {
        return Ok(false);
    }
    match store.insert_named(library, item).await {
        Ok(_) => Ok(true),
        Err(StoreError::Database(sqlx::Error::Database(e))) if e.is_unique_violation() => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_example_checks_as_the_api_would_store_it() {
        for example in EXAMPLES {
            hetsim_scripting::check_app(example.source, example.app).unwrap();
            for (file, text) in example.systems {
                let system = system(file, text).unwrap();
                assert!(!system.name.is_empty(), "{file}: no name");
                assert!(!system.body.contains("sass = "), "{file}: a file left to read");
                Library::Systems.check(&system).unwrap();
            }
        }
        assert_eq!(normalise("gajger/../kernels/x.sass"), "kernels/x.sass");
    }
}
