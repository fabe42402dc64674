//! `proprio list` and `proprio info`.

use crate::{CliResult, Failure, input};
use clap::Args;
use proprio::EnvSpec;
use proprio::serde_json::{self, Value, json};

#[derive(Args)]
pub struct ListArgs {
    /// Print a JSON array instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct InfoArgs {
    /// Environment id, e.g. classic/cartpole-v1.
    env: String,
    /// Config as inline JSON or a JSON file.
    #[arg(long)]
    config: Option<String>,
    /// Print the spec as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    obs: input::ObsArgs,
}

fn limit(spec: &EnvSpec) -> String {
    spec.max_episode_steps
        .map_or("none".into(), |n| n.to_string())
}

pub fn list(args: &ListArgs) -> CliResult {
    let registry = proprio::registry();
    let specs = registry
        .ids()
        .map(|id| registry.spec(id, &Value::Null))
        .collect::<Result<Vec<_>, _>>()?;
    if args.json {
        let rows: Vec<Value> = specs
            .iter()
            .map(|s| {
                json!({
                    "id": s.id,
                    "description": s.description,
                    "observation_space": s.observation_space,
                    "action_space": s.action_space,
                    "reward_range": [s.reward_range.0, s.reward_range.1],
                    "max_episode_steps": s.max_episode_steps,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).map_err(|e| Failure(e.to_string()))?
        );
        return Ok(());
    }
    println!(
        "{:<24} {:<28} {:<22} {:>9}  description",
        "id", "observation", "action", "max steps"
    );
    for s in &specs {
        println!(
            "{:<24} {:<28} {:<22} {:>9}  {}",
            s.id,
            s.observation_space.to_string(),
            s.action_space.to_string(),
            limit(s),
            s.description
        );
    }
    Ok(())
}

pub fn info(args: &InfoArgs) -> CliResult {
    let registry = proprio::registry();
    let config = input::config(args.config.as_deref())?;
    let mut spec = registry.spec(&args.env, &config)?;
    let state_dim = spec.observation_space.flat_dim();
    spec.observation_space = args.obs.options().space(&spec.observation_space);
    let shape = args.obs.shape(state_dim);
    if args.json {
        let mut doc = serde_json::to_value(&spec).map_err(|e| Failure(e.to_string()))?;
        doc["observation_shape"] = shape;
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).map_err(|e| Failure(e.to_string()))?
        );
        return Ok(());
    }
    let (entry, defaults) = registry.entry(&args.env)?;
    println!("{}\n  {}\n", spec.id, spec.description);
    println!("observation  {}", spec.observation_space);
    println!("             shape {shape}");
    println!("action       {}", spec.action_space);
    println!("             {}", spec.action_handling);
    println!("reward       {}", spec.reward);
    println!(
        "             range [{}, {}] per step",
        spec.reward_range.0, spec.reward_range.1
    );
    println!("termination  {}", spec.termination);
    println!("time limit   {} steps", limit(&spec));
    println!(
        "physics      {} physics step(s) per env step",
        entry.physics_steps_per_step
    );
    println!("\nconfig keys (defaults; pass --config '{{\"key\": value}}'):");
    if let Value::Object(map) = defaults {
        for (k, v) in map {
            println!("  {k} = {v}");
        }
    }
    println!(
        "  {} = {} (any env; null disables it)",
        proprio::MAX_EPISODE_STEPS,
        limit(&spec)
    );
    Ok(())
}
