"""agents.nn's and train.ppo's faster formulations compute what the plain autograd formulas compute.

``PolicyValueNet.forward_features`` (the trunk's first layer and the action logits with their own backward),
``PlanesNet.forward_features`` (the stem over all the planes, the residual ``addcmul``) and
``train.ppo.masked_logits`` (one ``torch.where`` for the floor) against the straightforward versions they
replaced: the same forward values bit for bit, and the same gradients (bitwise on the machine where
``benchmarks.lab.train_digest`` was checked; a tight tolerance here, since another CPU's BLAS may order a
differently shaped product's sums differently).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from agents import nn as ann  # noqa: E402 (after the importorskip)
from train.ppo import _NEG, _SPAN, masked_logits  # noqa: E402 (after the importorskip)


def _reference_forward(net, tile, glob):
    e = torch.relu(net.tile_enc(tile))
    x = net.body(torch.cat([net.tile_sum(e).flatten(1), glob], dim=1))
    per = net.tile_head(torch.relu(e + net.ctx(x).unsqueeze(1)))
    other = net.other_head(x)
    logits = torch.cat([per[:, :, 0], other[:, :5], per[:, :, 1], per[:, :, 2], other[:, 5:]], dim=1)
    return logits, net.value_head(x).squeeze(1)


def _reference_masked_logits(net, tile, glob, illegal):
    logits, value = _reference_forward(net, tile, glob)
    top = torch.where(illegal, float("-inf"), logits.detach()).amax(1, keepdim=True)
    return torch.where(illegal, _NEG, torch.maximum(logits, top - _SPAN)), value


def _inputs(n, seed):
    g = torch.Generator().manual_seed(seed)
    tile = torch.randint(0, 5, (n, 34, ann.NUM_TILE_FEATURES), generator=g).float() / 4
    glob = torch.rand((n, ann.NUM_GLOBAL), generator=g)
    illegal = torch.rand((n, ann.NUM_ACTIONS), generator=g) < 0.8
    illegal[:, -1] = False  # pass is always legal
    return tile, glob, illegal


def _grads(net, fn, *args):
    net.zero_grad(set_to_none=True)
    logits, value = fn(net, *args)
    w = torch.linspace(-1, 1, logits.shape[1])
    (torch.log_softmax(logits, 1) * w).sum().backward(retain_graph=True)
    (value**2).sum().backward()
    return logits.detach(), value.detach(), {k: p.grad.clone() for k, p in net.named_parameters()}


@pytest.mark.parametrize("n, channels, hidden", [(64, 4, 16), (700, 16, 128)])
def test_forward_and_gradients_match_the_plain_formulas(n, channels, hidden):
    torch.manual_seed(n)
    net = ann.PolicyValueNet(ann.NNConfig(channels, hidden))
    for head in (net.tile_head, net.other_head):  # a non-trivial policy (the init is near uniform)
        torch.nn.init.normal_(head.weight, std=1.0)
    tile, glob, illegal = _inputs(n, seed=n)
    with torch.no_grad():
        fast = net.forward_features(tile, glob)
        ref = _reference_forward(net, tile, glob)
    assert torch.equal(fast[0], ref[0]) and torch.equal(fast[1], ref[1])
    for fast_fn, ref_fn, args in (
        (lambda m, t, g: m.forward_features(t, g), _reference_forward, (tile, glob)),
        (masked_logits, _reference_masked_logits, (tile, glob, illegal)),
    ):
        lf, vf, gf = _grads(net, fast_fn, *args)
        lr, vr, gr = _grads(net, ref_fn, *args)
        assert torch.equal(lf, lr) and torch.equal(vf, vr)
        assert gf.keys() == gr.keys()
        for k in gf:
            torch.testing.assert_close(gf[k], gr[k], rtol=1e-5, atol=1e-7, msg=k)


def test_masked_logits_floor_and_illegal_values():
    torch.manual_seed(1)
    net = ann.PolicyValueNet()
    torch.nn.init.normal_(net.tile_head.weight, std=30.0)  # logits spread far beyond the floor
    tile, glob, illegal = _inputs(50, seed=2)
    with torch.no_grad():
        logits, _ = masked_logits(net, tile, glob, illegal)
    assert bool((logits[illegal] == _NEG).all())
    legal = torch.where(illegal, float("-inf"), logits)
    best = legal.amax(1, keepdim=True)
    assert bool(((logits >= best - _SPAN) | illegal).all())
    assert bool((logits == best - _SPAN).any())  # the floor was reached somewhere


def test_tile_row_slices_match_the_index_layout():
    """``tiles_to_row`` / ``row_to_tiles`` (slices) place and read the tiles where the index ``_POS`` does, with the
    same gradients: the planes network's tower layout, bit for bit."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(7, 3, 34, generator=g, requires_grad=True)
    w = torch.randn(7, 3, 37, generator=g)
    pos = torch.as_tensor(ann._POS)
    row = ann.tiles_to_row(x)
    ref = torch.zeros(7, 3, 37)
    ref[:, :, pos] = x.detach()
    assert torch.equal(row.detach(), ref)
    assert torch.equal(ann.row_to_tiles(row).detach(), x.detach())
    (row * w).sum().backward()
    assert torch.equal(x.grad, w[:, :, pos])
    x.grad = None
    ann.row_to_tiles(ann.tiles_to_row(x)).sum().backward()
    assert torch.equal(x.grad, torch.ones_like(x))


def _reference_planes_forward(net, planes, scal):
    """PlanesNet's forward as first written: the stem on the slice of the non-mask planes, ``x + block(x) * gap``."""
    planes, scal = planes.float(), scal.float()
    k, j = net.n_planes, net.n_scalars
    glob, legal_other = scal[:, :j] * net.inv_scale, scal[:, j:]
    x = net.stem(planes[:, :k]) + net.tile_embed + net.scalar_in(glob).unsqueeze(2)
    x = ann.tiles_to_row(x)
    for block in net.tower:
        x = x + block(x) * net.gap
    x = torch.relu(ann.row_to_tiles(x))
    offer = torch.bmm(x, planes[:, ann.P.P_OFFER].unsqueeze(2)).squeeze(2)
    h = net.body(torch.cat([net.tile_sum(x).flatten(1), offer, glob], dim=1))
    per = net.tile_head(torch.relu(x + net.ctx(h).unsqueeze(2) + net.legal_in(planes[:, k:])))
    other = net.other_head(torch.cat([h, legal_other], dim=1))
    logits = torch.cat([per[:, 0], other[:, :5], per[:, 1], per[:, 2], other[:, 5:]], dim=1)
    return logits, net.value_head(h).squeeze(1)


@pytest.mark.parametrize("n, with_features", [(1, False), (300, True), (1100, True)])
def test_planes_forward_and_gradients_match_the_first_formulation(n, with_features):
    """PlanesNet's stem over all the planes (zero weights on the mask planes) and its residual ``addcmul`` give the
    first formulation's logits, values and gradients bit for bit (the mask planes' terms are exact zeros)."""
    torch.manual_seed(n)
    net = ann.PlanesNet(ann.NNConfig(8, 16, arch="planes", blocks=2, with_features=with_features))
    for block in net.tower:  # a tower that is not the identity (the second convolutions start at zero)
        torch.nn.init.normal_(block.conv2.weight, std=0.3)
    for head in (net.tile_head, net.other_head):
        torch.nn.init.normal_(head.weight, std=1.0)
    g = torch.Generator().manual_seed(n)
    planes = (torch.rand((n, net.n_planes + 3, 34), generator=g) < 0.2).float()
    if with_features:
        planes = planes * torch.rand(planes.shape, generator=g)
    scal = torch.randint(0, 10, (n, net.n_scalars + 7), generator=g).float()
    lf, vf, gf = _grads(net, lambda m, p, s: m.forward_features(p, s), planes, scal)
    lr, vr, gr = _grads(net, _reference_planes_forward, planes, scal)
    assert torch.equal(lf, lr) and torch.equal(vf, vr)
    assert gf.keys() == gr.keys()
    for k in gf:
        torch.testing.assert_close(gf[k], gr[k], rtol=1e-5, atol=1e-7, msg=k)
