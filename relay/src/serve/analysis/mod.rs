//! Engine evaluations computed once for every spectator: the positions games reach come in
//! through the [`intake`] (told by the publisher after each commit), wait in the [`queue`]
//! until they are public, and go to workers, each running a UCI engine ([`engine`],
//! [`worker`]) here (`relay serve --eval-workers N`) or on another machine (`relay
//! eval-worker`, over `/api/eval/*`); the [`desk`] keeps what they answer and sends it to the
//! spectators in `eval` messages. The cost does not grow with the audience: each position is
//! evaluated once, and an `eval` message is one shared frame.

pub mod desk;
pub mod engine;
pub mod intake;
pub mod queue;
pub mod worker;
