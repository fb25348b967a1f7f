//! The data files of models/data/: a GPU's or an architecture's numbers, each a TOML table
//! with its `value`, what it is (`basis`: datasheet, measured, fitted, assumed) and `from`
//! what, so that no calibrated constant is copied into Rust by hand. `hetsim calibrate gpu
//! DIR --data-file FILE` writes a GPU's; docs/MODELS.md ("Calibration") describes both kinds.

use std::collections::BTreeMap;

/// The numbers of a data file, by attribute: each table's `value`.
pub fn values(text: &str) -> Result<BTreeMap<String, f64>, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    table
        .iter()
        .filter_map(|(key, v)| v.as_table().map(|t| (key, t)))
        .map(|(key, t)| {
            let value = t
                .get("value")
                .and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)));
            value
                .map(|v| (key.clone(), v))
                .ok_or_else(|| format!("[{key}]: expected a numeric `value`"))
        })
        .collect()
}

/// A top-level text field of a data file (`computeCapability = "9.0"`).
pub fn text_field(text: &str, key: &str) -> Result<String, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    table
        .get(key)
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .ok_or_else(|| format!("`{key}`: expected a text field"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_value_is_read_and_a_bad_one_is_named() {
        let text = "gpu = \"X\"\n[warpSkew]\nvalue = 0.05\nbasis = \"fitted\"\n[sms]\nvalue = 132\n";
        let numbers = super::values(text).expect("reads");
        assert_eq!(numbers.get("warpSkew"), Some(&0.05));
        assert_eq!(numbers.get("sms"), Some(&132.0));
        assert_eq!(super::text_field(text, "gpu").as_deref(), Ok("X"));
        let bad = super::values("[warpSkew]\nbasis = \"fitted\"\n").expect_err("no value");
        assert!(bad.contains("[warpSkew]") && bad.contains("value"), "{bad}");
        assert!(super::text_field(text, "nope").is_err());
    }
}
