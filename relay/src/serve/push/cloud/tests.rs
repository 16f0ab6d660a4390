//! The venue's pusher against a cloud relay's answers, on a real SQLite store: what goes
//! in each request, and what each answer does to the delivery marks.

use super::*;
use crate::serve::push::status::Targets;
use crate::serve::push::testing::{pair, play, store_with_round};
use relay_store::{GameId, RoundId, Seq};
use std::sync::Arc;

const URL: &str = "http://cloud.test";

/// A venue's store of its own: a round with `boards` games.
async fn venue(name: &str, boards: u32) -> (Store, i64, Vec<i64>) {
    store_with_round(&format!("push-cloud-{name}"), boards).await
}

async fn e4(store: &Store, game: GameId) -> i64 {
    play(store, game, 1, "e4", "e2e4").await
}

async fn started(store: &Store) -> (Cloud, Slot) {
    let target = PushTarget {
        url: URL.into(),
        token: "secret".into(),
        hall: "hall".into(),
    };
    let slot = Targets::default().register(URL.into(), "relay");
    let mut cloud = Cloud::new(
        Lookup::new(store.clone(), Arc::new(Boards::default())),
        store.clone(),
        target,
    );
    cloud.start().await.expect("origin");
    (cloud, slot)
}

/// The next request of the look, as the cloud reads it.
async fn next_batch(cloud: &mut Cloud) -> (PushBatch, Sent) {
    match cloud.next().await.expect("next") {
        Next::Send(r) => {
            assert_eq!(r.post.url, format!("{URL}/api/push"));
            assert_eq!(r.post.token, "secret");
            let batch = serde_json::from_slice(&r.post.body).expect("a batch");
            (batch, r.carries)
        }
        other => panic!("nothing sent: {other:?}"),
    }
}

/// A look that sends one batch.
async fn look_and_send(cloud: &mut Cloud, slot: &Slot) -> (PushBatch, Sent) {
    cloud.look(slot).await.expect("look");
    next_batch(cloud).await
}

async fn nothing_to_send(cloud: &mut Cloud, slot: &Slot) {
    cloud.look(slot).await.expect("look");
    let next = cloud.next().await.expect("next");
    assert!(matches!(next, Next::Idle), "sent {next:?}");
}

fn answer(status: u16, body: &impl serde::Serialize) -> Result<Reply, Unanswered> {
    Ok(Reply {
        status,
        text: serde_json::to_string(body).expect("JSON"),
    })
}

fn applied() -> Result<Reply, Unanswered> {
    answer(200, &PushReply::default())
}

fn ids(batch: &PushBatch) -> Vec<i64> {
    batch.games.iter().map(|g| g.id.get()).collect()
}

#[tokio::test]
async fn a_delivered_plan_moves_the_marks_on_and_only_what_changed_goes_next() {
    let (store, round, games) = venue("delivered", 2).await;
    let (mut cloud, slot) = started(&store).await;
    let (batch, sent) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(ids(&batch), games);
    assert_eq!(batch.batch, 1);
    assert_eq!(batch.tournaments.len(), 1);
    assert_eq!(batch.eboards, Some(Vec::new()), "the e-boards, once");
    let queued = slot.status().queued;
    assert!(queued > 0, "the pairings wait");
    let conflict = PushConflict {
        game_id: games[1],
        cloud_game_id: 9,
        board_no: 2,
        message: "held back".into(),
        clash: false,
    };
    let reply = PushReply {
        conflicts: vec![conflict.clone()],
        ..Default::default()
    };
    let verdict = cloud
        .answered(sent, answer(200, &reply))
        .await
        .expect("taken");
    assert_eq!(
        verdict,
        Verdict::Delivered(Report {
            changes: queued as u64,
            conflicts: vec![conflict],
            queued: Some(0),
        })
    );
    assert!(matches!(cloud.next().await, Ok(Next::Idle)), "no backlog");

    // Nothing new: no request (the tournaments and e-boards are sent, the last answer
    // is recent); the marks are written to the store.
    nothing_to_send(&mut cloud, &slot).await;
    let seq = store.round(RoundId::from(round)).await.expect("round").seq;
    assert_eq!(
        store.upstream_sent(URL).await.expect("marks")[&RoundId::from(round)],
        seq
    );

    // A move: that game alone, with the next batch number.
    e4(&store, GameId::from(games[0])).await;
    let (batch, _) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(ids(&batch), [games[0]]);
    assert_eq!(batch.batch, 2);
    assert_eq!(batch.eboards, None);
}

#[tokio::test]
async fn a_plan_that_leaves_changes_waiting_asks_for_the_next_look_at_once() {
    let (store, first, games) = venue("backlog", 1).await;
    let second = store
        .next_round(RoundId::from(first))
        .await
        .expect("round")
        .id;
    let later = pair(&store, second, 1).await;
    let (mut cloud, slot) = started(&store).await;
    // One page of changes a plan: the first round's, the second waits.
    cloud.plan_changes = 1;
    let (batch, sent) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(ids(&batch), games);
    let Ok(Verdict::Delivered(report)) = cloud.answered(sent, applied()).await else {
        panic!("not delivered");
    };
    assert!(report.queued.is_some_and(|q| q > 0), "{report:?}");
    assert!(matches!(cloud.next().await, Ok(Next::Again)));
    let (batch, sent) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(ids(&batch), later);
    let Ok(Verdict::Delivered(report)) = cloud.answered(sent, applied()).await else {
        panic!("not delivered");
    };
    assert_eq!(report.queued, Some(0));
    assert!(matches!(cloud.next().await, Ok(Next::Idle)));
}

#[tokio::test]
async fn more_games_than_a_batch_holds_go_in_several_delivered_with_the_last() {
    let (store, _, games) = venue("batches", 151).await;
    let (mut cloud, slot) = started(&store).await;
    let (batch, sent) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(ids(&batch), games[..150]);
    assert!(batch.eboards.is_some());
    let verdict = cloud.answered(sent, applied()).await;
    assert!(matches!(verdict, Ok(Verdict::Taken(_))), "{verdict:?}");
    let (batch, sent) = next_batch(&mut cloud).await;
    assert_eq!(ids(&batch), games[150..]);
    assert_eq!(batch.batch, 2);
    assert_eq!(batch.tournaments.len(), 1, "every batch carries them");
    assert_eq!(batch.eboards, None, "the e-boards go with the first");
    let verdict = cloud.answered(sent, applied()).await;
    assert!(matches!(verdict, Ok(Verdict::Delivered(_))), "{verdict:?}");
    assert!(matches!(cloud.next().await, Ok(Next::Idle)));
}

#[tokio::test]
async fn a_refusal_waits_five_seconds_and_a_cut_link_backs_off_and_neither_moves_the_marks() {
    let (store, _, games) = venue("refused", 2).await;
    let (mut cloud, slot) = started(&store).await;
    let (_, sent) = look_and_send(&mut cloud, &slot).await;
    let refused = answer(401, &serde_json::json!({"error": "wrong token"}));
    assert_eq!(
        cloud.answered(sent, refused).await,
        Err(Failure {
            error: "the cloud relay refused the push token (401): wrong token".into(),
            wait: Wait::For(Duration::from_secs(5)),
        })
    );
    let (batch, sent) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(ids(&batch), games, "sent again whole");
    let refused = answer(400, &serde_json::json!({"error": "illegal move"}));
    let failure = cloud.answered(sent, refused).await.expect_err("refused");
    assert_eq!(
        failure.error,
        "the cloud relay refused the batch (400): illegal move"
    );
    assert_eq!(failure.wait, Wait::For(Duration::from_secs(5)));
    for answer in [
        Err(Unanswered("connection refused".into())),
        Ok(Reply {
            status: 200,
            text: "<html>".into(),
        }),
    ] {
        let (batch, sent) = look_and_send(&mut cloud, &slot).await;
        assert_eq!(ids(&batch), games);
        let failure = cloud.answered(sent, answer).await.expect_err("failed");
        assert!(
            failure
                .error
                .starts_with("cannot reach http://cloud.test: ")
        );
        assert_eq!(failure.wait, BACK_OFF);
    }
}

#[tokio::test]
async fn a_stale_answer_numbers_on_from_the_clouds_last_batch() {
    let (store, _, games) = venue("stale", 1).await;
    let (mut cloud, slot) = started(&store).await;
    let (batch, sent) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(batch.batch, 1);
    let stale = PushReply {
        stale: true,
        last_batch: 5000,
        ..Default::default()
    };
    assert_eq!(
        cloud.answered(sent, answer(200, &stale)).await,
        Ok(Verdict::Retry)
    );
    let (batch, _) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(batch.batch, 5001);
    assert_eq!(ids(&batch), games, "nothing was delivered");
}

#[tokio::test]
async fn taking_over_reads_the_marks_again_and_sends_the_tournaments_again() {
    let (store, round, games) = venue("taken-over", 2).await;
    let (mut cloud, slot) = started(&store).await;
    let (_, sent) = look_and_send(&mut cloud, &slot).await;
    cloud.answered(sent, applied()).await.expect("taken");
    nothing_to_send(&mut cloud, &slot).await;
    // Another relay pushes a move and moves the marks on.
    let seq = e4(&store, GameId::from(games[1])).await;
    store
        .upstream_delivered(URL, &[(RoundId::from(round), Seq::from(seq))])
        .await
        .expect("marks");
    cloud.taken_over();
    let (batch, _) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(ids(&batch), Vec::<i64>::new(), "the move was delivered");
    assert_eq!(batch.tournaments.len(), 1);
    assert_eq!(batch.eboards, Some(Vec::new()));
}

#[tokio::test]
async fn a_resend_forgets_the_marks_and_every_game_goes_again() {
    let (store, _, games) = venue("resend", 2).await;
    let (mut cloud, slot) = started(&store).await;
    let (_, sent) = look_and_send(&mut cloud, &slot).await;
    cloud.answered(sent, applied()).await.expect("delivered");
    nothing_to_send(&mut cloud, &slot).await;
    assert!(!store.upstream_sent(URL).await.expect("marks").is_empty());
    // The tournament joined an event on the cloud: it asks for everything again.
    e4(&store, GameId::from(games[0])).await;
    let (batch, sent) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(ids(&batch), [games[0]]);
    let resend = PushReply {
        resend: true,
        ..Default::default()
    };
    let verdict = cloud.answered(sent, answer(200, &resend)).await;
    assert!(matches!(verdict, Ok(Verdict::Retry)), "{verdict:?}");
    assert!(store.upstream_sent(URL).await.expect("marks").is_empty());
    let (batch, sent) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(ids(&batch), games, "every game again");
    assert_eq!(batch.tournaments.len(), 1, "and the tournaments");
    assert!(batch.resent, "saying so");
    cloud.answered(sent, applied()).await.expect("delivered");
    e4(&store, GameId::from(games[1])).await;
    let (batch, _) = look_and_send(&mut cloud, &slot).await;
    assert!(!batch.resent, "the cloud stopped asking");
}

#[tokio::test]
async fn a_change_in_what_the_cloud_holds_back_sends_the_eboards_again() {
    let (store, _, games) = venue("eboards-again", 1).await;
    let (mut cloud, slot) = started(&store).await;
    let (batch, sent) = look_and_send(&mut cloud, &slot).await;
    assert!(batch.eboards.is_some());
    cloud.answered(sent, applied()).await.expect("delivered");
    e4(&store, GameId::from(games[0])).await;
    let (batch, sent) = look_and_send(&mut cloud, &slot).await;
    assert_eq!(
        batch.eboards, None,
        "e-boards as they were are not sent again"
    );
    // The cloud holds the game back (another hall's board there), then places it: each
    // change of what it holds back sends the e-boards again, so it shows them where their
    // games are.
    let clash = PushConflict {
        game_id: games[0],
        cloud_game_id: 3,
        board_no: 1,
        message: "clash".into(),
        clash: true,
    };
    let held = PushReply {
        conflicts: vec![clash],
        ..Default::default()
    };
    cloud
        .answered(sent, answer(200, &held))
        .await
        .expect("taken");
    play(&store, GameId::from(games[0]), 2, "e5", "e7e5").await;
    let (batch, sent) = look_and_send(&mut cloud, &slot).await;
    assert!(batch.eboards.is_some(), "held back: the e-boards go again");
    cloud.answered(sent, applied()).await.expect("taken");
    play(&store, GameId::from(games[0]), 3, "Nf3", "g1f3").await;
    let (batch, _) = look_and_send(&mut cloud, &slot).await;
    assert!(batch.eboards.is_some(), "placed: the e-boards go again");
}
