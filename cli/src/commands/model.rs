//! `hetsim model NAME --params FILE`: one analytic model, its intermediates and its result.

use anyhow::{anyhow, bail, Result};
use hetsim_models::{transit, Evaluation, ModelName};

use crate::cli::ModelArgs;
use crate::input::params_from_json;
use hetsim_lab::files::{display_name, read_text, write_file};
use hetsim_service::table;

pub fn run(args: ModelArgs) -> Result<()> {
    let model: ModelName = args.name.parse()?;
    let origin = display_name(&args.params);
    let params = params_from_json(&read_text(&args.params)?, &origin)?;
    let evaluation = match &args.svg {
        None => hetsim_models::evaluate(model, params).map_err(|e| anyhow!("{origin}: {model}: {e}"))?,
        Some(path) => {
            if model != ModelName::Transit {
                bail!("--svg draws the transit figure: only the transit model has one, not {model}");
            }
            let input = transit::Input::from_params(params).map_err(|e| anyhow!("{origin}: {model}: {e}"))?;
            let output = transit::evaluate(&input);
            write_file(path, transit::svg(&input, &output))?;
            Evaluation::Transit(output)
        }
    };
    if args.json {
        return super::print_json(&evaluation);
    }
    println!("{model}: {}", model.citation());
    print!("{}", table::key_values(&serde_json::to_value(&evaluation)?));
    println!("result: {}", evaluation.summary());
    Ok(())
}
