//! The analytic models of `hetsim-models`, callable from any script: `volkov_kernel(params)`,
//! `hong_kim`, `wang_lou`, `transit`, `occupancy`, `transfer`, `gmem_throughput`,
//! `queueing_kernel`. Each takes
//! an object map of the model's input keys and returns a map of its outputs.

use hetsim_models::{ModelName, Params, Scalar};
use rhai::{Dynamic, Engine, EvalAltResult, Map};

/// An object map of numbers and strings as model parameters.
pub fn params_from_map(map: &Map, function: &str) -> Result<Params, Box<EvalAltResult>> {
    map.iter()
        .map(|(key, value)| {
            let scalar = if let Ok(x) = value.as_float() {
                Scalar::Number(x)
            } else if let Ok(i) = value.as_int() {
                Scalar::Number(i as f64)
            } else if value.is_string() {
                Scalar::Text(value.clone().into_string()?)
            } else {
                return Err(format!(
                    "{function}: key `{key}`: expected a number or a string, got {}",
                    value.type_name()
                )
                .into());
            };
            Ok((key.to_string(), scalar))
        })
        .collect()
}

fn register(engine: &mut Engine, function: &'static str, model: ModelName) {
    engine.register_fn(
        function,
        move |params: Map| -> Result<Dynamic, Box<EvalAltResult>> {
            let params = params_from_map(&params, function)?;
            let output = hetsim_models::evaluate(model, params).map_err(|e| format!("{function}: {e}"))?;
            rhai::serde::to_dynamic(output)
        },
    );
}

/// Registers every model function on `engine`.
pub fn register_models(engine: &mut Engine) {
    for (function, model) in [
        ("volkov_kernel", ModelName::Volkov),
        ("gmem_throughput", ModelName::GmemThroughput),
        ("transfer", ModelName::Transfer),
        ("hong_kim", ModelName::HongKim),
        ("wang_lou", ModelName::WangLou),
        ("transit", ModelName::Transit),
        ("occupancy", ModelName::Occupancy),
        ("queueing_kernel", ModelName::Queueing),
    ] {
        register(engine, function, model);
    }
}
