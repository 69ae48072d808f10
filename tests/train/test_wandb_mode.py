"""W&B follows the user: WANDB_MODE when set, online with a configured account, offline without."""

from train.lightning.wandb_mode import apply, choose_mode


def test_wandb_mode_follows_the_users_account(tmp_path, monkeypatch):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine api.wandb.ai\n  login user\n  password 0123456789abcdef\n")
    netrc.chmod(0o600)
    empty = tmp_path / "empty_netrc"
    empty.write_text("")
    assert choose_mode({"NETRC": str(empty)})[0] == "offline"
    assert choose_mode({"NETRC": str(netrc)})[0] == "online"  # what `wandb login` leaves behind
    assert choose_mode({"NETRC": str(empty), "WANDB_API_KEY": "k"})[0] == "online"
    assert choose_mode({"NETRC": str(netrc), "WANDB_MODE": "disabled"}) == ("disabled", "WANDB_MODE is set")
    other = tmp_path / "other_netrc"
    other.write_text("machine wandb.example.org\n  login user\n  password k\n")
    other.chmod(0o600)
    assert choose_mode({"NETRC": str(other)})[0] == "offline"
    assert choose_mode({"NETRC": str(other), "WANDB_BASE_URL": "https://wandb.example.org"})[0] == "online"
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("NETRC", str(empty))
    said = []
    assert apply(said.append) == "offline" and "no W&B account" in said[0]
