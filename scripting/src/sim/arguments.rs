//! Reading a `sim` call's arguments: numbers, texts and `sim.send`'s options, each error
//! naming the call and the argument.

use hetsim_models::params::closest;
use hetsim_simulator::{finite_non_negative, Direction, HostMemory};
use rhai::{Dynamic, Map};

use super::Fallible;

pub(super) fn number(value: &Dynamic, what: &str) -> Fallible<f64> {
    argument(value, what, "")
}

/// `number` of argument `arg` of `call`: the error's text is built only when it is one (every
/// message goes through here).
pub(super) fn argument(value: &Dynamic, call: &str, arg: &str) -> Fallible<f64> {
    let number = if value.is_float() {
        value.as_float().ok()
    } else {
        int(value).map(|i| i as f64)
    };
    number.ok_or_else(|| format!("{call}{arg}: expected a number, got {}", value.type_name()).into())
}

/// `value` where it is an integer. Asked first, because Rhai's `as_int` and `as_float` name
/// the other type on failure, and naming a type was 3 % of a ping-pong's instructions.
pub(super) fn int(value: &Dynamic) -> Option<i64> {
    value.is_int().then(|| value.as_int().ok()).flatten()
}

/// `value` where the engine will take it (finite, >= 0), checked here so that the error is
/// the script's, at its line: an input such as `numElements = -4e8` shows where it went wrong.
pub(super) fn checked(value: f64, what: &str) -> Fallible<f64> {
    finite_non_negative(value, what).map_err(Into::into)
}

pub(super) fn text(value: &Dynamic, what: &str) -> Fallible<String> {
    value
        .clone()
        .try_cast::<rhai::ImmutableString>()
        .map(|s| s.to_string())
        .ok_or_else(|| format!("{what}: expected a string, got {}", value.type_name()).into())
}

/// How a message travels: `sim.send`'s direction and options.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct SendOptions {
    /// `None`: from the endpoints' kinds.
    pub(super) direction: Option<Direction>,
    pub(super) host_memory: HostMemory,
}

pub(super) fn direction(value: &Dynamic, what: &str) -> Fallible<Direction> {
    let name = text(value, what)?;
    Direction::parse(&name).ok_or_else(|| {
        format!("{what}: `{name}` is not HostToDevice, DeviceToHost, DeviceToDevice or HostToHost").into()
    })
}

impl SendOptions {
    /// `sim.send`'s options map: `direction` (as the third argument) and `hostMemory`
    /// (`"pageable"`, the default, or `"pinned"`).
    pub(super) fn read(mut self, options: &Map) -> Fallible<Self> {
        for (key, value) in options {
            match key.as_str() {
                "direction" => self.direction = Some(direction(value, "sim.send: option `direction`")?),
                "hostMemory" => {
                    let name = text(value, "sim.send: option `hostMemory`")?;
                    self.host_memory = HostMemory::parse(&name).ok_or_else(|| {
                        format!("sim.send: option `hostMemory`: `{name}` is not pageable or pinned")
                    })?;
                }
                other => {
                    let hint = closest(other, ["direction", "hostMemory"])
                        .map(|h| format!("; did you mean `{h}`?"))
                        .unwrap_or_default();
                    return Err(
                        format!("sim.send: unknown option `{other}`{hint} (direction, hostMemory)").into(),
                    );
                }
            }
        }
        Ok(self)
    }
}
