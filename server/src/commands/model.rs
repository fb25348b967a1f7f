//! `hetsim model NAME --params FILE`: one analytic model, its intermediates and its result.

use anyhow::{anyhow, bail, Context, Result};
use hetsim_models::{transit, Evaluation, ModelName};

use crate::cli::ModelArgs;
use crate::input::{display_name, params_from_json, read_text};
use crate::table;

pub fn run(args: ModelArgs) -> Result<()> {
    let model: ModelName = args.name.parse()?;
    let origin = display_name(&args.params);
    let params = params_from_json(&read_text(&args.params)?, &origin)?;
    let evaluation =
        hetsim_models::evaluate(model, params.clone()).map_err(|e| anyhow!("{origin}: {model}: {e}"))?;
    if let Some(path) = &args.svg {
        let Evaluation::Transit(output) = &evaluation else {
            bail!("--svg draws the transit figure: only the transit model has one, not {model}");
        };
        // Reading again cannot fail: the same parameters were just evaluated.
        let input = transit::Input::from_params(params).map_err(|e| anyhow!("{origin}: {e}"))?;
        std::fs::write(path, transit::svg(&input, output))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        return super::print_json(&evaluation);
    }
    println!("{model}: {}", model.citation());
    print!("{}", table::key_values(&serde_json::to_value(&evaluation)?));
    println!("result: {}", evaluation.summary());
    Ok(())
}
