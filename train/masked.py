"""The masked policy of :mod:`train.ppo`: the logits of the legal actions, and their probabilities, fast.

Shared by the rollout, the update, the pool opponents (:mod:`train.ppo`) and the anchor's KL
(:mod:`train.anchor`), so that every one of them reads the same distribution.
"""

from __future__ import annotations

import torch

_SPAN = 40.0  # legal logits are kept within this of the row's best (probabilities >= e^-40, no subnormals)
_NEG = -1e8  # finite logit of illegal actions in training (keeps entropy and gradients free of NaN)


def masked_logits(net, tile: torch.Tensor, glob: torch.Tensor, illegal: torch.Tensor):
    """``(logits with illegal actions at -1e8, value)`` from the network's features (:func:`agents.nn.
    obs_features`): finite, so entropies and gradients have no NaN. ``illegal`` is ``~masks`` (the update
    computes it once per rollout)."""
    logits, value = net.forward_features(tile, glob, None)
    # legal logits are floored at the best legal one - _SPAN: a confident (BC) policy otherwise gives legal actions
    # probabilities below float32's normal range, and the exp / softmax backward on subnormals is slow on CPU
    # torch.where instead of masked_fill (the same values and gradients; masked_fill with a bool mask is not
    # vectorised on CPU: 0.93 against 0.53 ms for 4,096 x 109 on one core)
    # one torch.where with a gradient (the legal logits at or above the floor) instead of torch.maximum and a
    # second where: the same values, and the same gradients but at an exact tie with the floor (maximum's backward
    # halves the gradient there); maximum's backward alone cost 3 ms per minibatch of 4,096 on one core
    top = torch.where(illegal, float("-inf"), logits.detach()).amax(1, keepdim=True)
    floor = top - _SPAN
    keep = (logits.detach() >= floor).logical_and_(~illegal)
    return torch.where(keep, logits, torch.where(illegal, _NEG, floor)), value


def masked_probs(logp: torch.Tensor, illegal: torch.Tensor) -> torch.Tensor:
    """``logp.exp()`` of :func:`masked_logits`' log-softmax, computed fast: the illegal entries (about -1e8)
    make ``exp`` take its slow underflow path (measured 10x slower on CPU), so they are clamped first and set
    to their exact value 0 after; legal log-probabilities are >= -_SPAN - log(NUM_ACTIONS) (about -45), far
    above the clamp, so every value (and gradient) is the same as ``logp.exp()``'s."""
    return torch.where(illegal, 0.0, logp.clamp_min(-80.0).exp())
