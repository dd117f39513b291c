"""Bessel functions of orders 0 and 1 as formulas over the core tier: Chebyshev series and rational
functions evaluated with arithmetic, ``exp``/``log``/``sqrt``/``sin``/``cos``, and ``where`` choosing
the range.

The approximations are those of the Cephes Math Library (release 2.8, S. L. Moshier; described in
S. L. Moshier, *Methods and Programs for Mathematical Functions*, Prentice-Hall, 1989), which
PyTorch's kernels and scipy.special also use; the coefficient tables below are Cephes' published
values (files i0.c, i1.c, k0.c, k1.c, j0.c, j1.c), the code that evaluates them is our own:

- ``I0``, ``I1`` (and the scaled ``I0e``, ``I1e``): Chebyshev series in ``x / 2 - 2`` on [0, 8] and
  in ``32 / x - 2`` beyond (there times ``1 / sqrt(x)``), ``I = exp(|x|) Ie``; float32 takes the
  power series of ``I0``, ``I1 / x`` on [0, 8] instead (positive terms, see ``_I_POWER``);
- ``K0``, ``K1`` (and the scaled ``K0e``, ``K1e``): on (0, 2] a Chebyshev series in ``x^2 - 2``
  plus the ``log(x / 2) I(x)`` term, beyond 2 a series in ``8 / x - 2`` times ``1 / sqrt(x)``;
- ``J0``, ``J1``, ``Y0``, ``Y1``: rational functions of ``x^2`` on [0, 5] (``J0``'s and ``J1``'s
  with the factors ``(x^2 - r1)(x^2 - r2)`` of their first two zeros; ``Y`` adds
  ``(2 / pi) log(x) J(x)``), beyond 5 Hankel's asymptotic form ``sqrt(2 / (pi x)) (P cos(x - phi) -
  (5 / x) Q sin(x - phi))`` with ``P``, ``Q`` rational in ``25 / x^2``.

One change from Cephes: the phase ``x - pi/4`` (``x - 3 pi/4``) is not rounded before its cosine
is taken; ``cos(x - pi/4) = (cos x + sin x) / sqrt(2)`` and its kin keep the argument reduction of
``sin``/``cos`` exact, so that ``J``/``Y`` stay within ~1e-15 of the envelope ``sqrt(2 / (pi x))``
for large ``x`` too, where Cephes (and PyTorch) lose ``ulp(x) / 2`` of phase (3e-11 at ``x = 1e6``).

Float64 is computed in float64, everything else in float32 (integers promote to the default float
dtype as the op's meta says; float16/bfloat16 are rounded once at the end). In float32 the
Chebyshev series drop their leading terms whose sum is below 2^-40, which float32 cannot see.
Measured against scipy.special (core-tensor/tests/test_decomp_extbessel.py): float64 within 1e-14
relative for I, K (and scaled), within 1e-14 of ``max(|f|, envelope)`` for J, Y (within 2e-15 of
mpmath out to 1e6, where scipy's rounded phase is 3e-11 off). float32, in units of its eps: the I
and J within 4, the K within 7, the spherical j0 within 1, Y0 and Y1 12 near x = 5 (Y's rational
function cancels there); PyTorch's float32 kernels measure 9 for I1 and 19-21 for J and Y.

Special values follow PyTorch: ``K0(0) = K1(0) = +inf``, ``Y0(0) = Y1(0) = -inf``, ``K`` and ``Y`` of
negative arguments (and of -inf) NaN, ``I0(+-inf)`` NaN (``exp(x) * 0``, as PyTorch's kernel),
``I0e(+-inf) = K(inf) = 0``, ``J(+-inf)`` and ``Y(inf)`` NaN, the spherical ``j0(+-inf) = 0``.
Where a branch is not taken its input is moved into the branch's range, so that it computes no
infinity or NaN whose gradient (``where`` gives it 0) would turn into NaN (0 * inf).
"""
from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op, result_dtype, scalar_like

# -- Cephes' coefficient tables (highest order first, as Cephes lists them) ----------------

#: exp(-x) I0(x) on [0, 8], a Chebyshev series in x / 2 - 2 (i0.c, A)
_I0_NEAR = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1)
#: exp(-x) sqrt(x) I0(x) on [8, inf), a Chebyshev series in 32 / x - 2 (i0.c, B)
_I0_FAR = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1)
#: exp(-x) I1(x) / x on [0, 8] (i1.c, A)
_I1_NEAR = (
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
    9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
    -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
    4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
    -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
    2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
    -1.76416518357834055153e-1, 2.52587186443633654823e-1)
#: exp(-x) sqrt(x) I1(x) on [8, inf) (i1.c, B)
_I1_FAR = (
    7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
    -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
    -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
    4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
    3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
    -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
    -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
    7.78576235018280120474e-1)
#: K0(x) + log(x / 2) I0(x) on (0, 2], a Chebyshev series in x^2 - 2 (k0.c, A)
_K0_NEAR = (
    1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
    1.90451637722020886025e-9, 2.53479107902614945675e-7, 2.28621210311945178607e-5,
    1.26461541144692592338e-3, 3.59799365153615016266e-2, 3.44289899924628486886e-1,
    -5.35327393233902768720e-1)
#: exp(x) sqrt(x) K0(x) on [2, inf), a Chebyshev series in 8 / x - 2 (k0.c, B)
_K0_FAR = (
    5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
    -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
    6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
    -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
    1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
    -1.69753450938905987466e-9, 8.57403401741422608519e-9, -4.66048989768794782956e-8,
    2.76681363944501510342e-7, -1.83175552271911948767e-6, 1.39498137188764993662e-5,
    -1.28495495816278026384e-4, 1.56988388573005337491e-3, -3.14481013119645005427e-2,
    2.44030308206595545468e0)
#: x (K1(x) - log(x / 2) I1(x)) on (0, 2] (k1.c, A)
_K1_NEAR = (
    -7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
    -1.41148839263352776110e-10, -2.21338763073472585583e-8, -2.43340614156596823496e-6,
    -1.73028895751305206302e-4, -6.97572385963986435018e-3, -1.22611180822657148235e-1,
    -3.53155960776544875667e-1, 1.52530022733894777053e0)
#: exp(x) sqrt(x) K1(x) on [2, inf) (k1.c, B)
_K1_FAR = (
    -5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
    1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
    -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
    3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
    -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
    2.01504975519703286596e-9, -1.03457624656780970260e-8, 5.74108412545004946722e-8,
    -3.50196060308781257119e-7, 2.40648494783721712015e-6, -1.93619797416608296024e-5,
    1.95215518471351631108e-4, -2.85781685962277938680e-3, 1.03923736576817238437e-1,
    2.72062619048444266945e0)

# j0.c: J0 = (z - r1)(z - r2) RP(z) / RQ(z) on [0, 5] (z = x^2, r the squares of its first two
# zeros); Y0 = YP(z) / YQ(z) + (2 / pi) log(x) J0(x) there; P = PP/PQ and Q = QP/QQ in 25 / x^2
# beyond. Polynomials highest order first; the tables marked "monic" omit their leading 1.
_J0_R1, _J0_R2 = 5.78318596294678452118e0, 3.04712623436620863991e1
_J0_RP = (-4.79443220978201773821e9, 1.95617491946556577543e12, -2.49248344360967716204e14,
          9.70862251047306323952e15)
_J0_RQ = (4.99563147152651017219e2, 1.73785401676374683123e5, 4.84409658339962045305e7,  # monic
          1.11855537045356834862e10, 2.11277520115489217587e12, 3.10518229857422583814e14,
          3.18121955943204943306e16, 1.71086294081043136091e18)
_J0_YP = (1.55924367855235737965e4, -1.46639295903971606143e7, 5.43526477051876500413e9,
          -9.82136065717911466409e11, 8.75906394395366999549e13, -3.46628303384729719441e15,
          4.42733268572569800351e16, -1.84950800436986690637e16)
_J0_YQ = (1.04128353664259848412e3, 6.26107330137134956842e5, 2.68919633393814121987e8,  # monic
          8.64002487103935000337e10, 2.02979612750105546709e13, 3.17157752842975028269e15,
          2.50596256172653059228e17)
_J0_PP = (7.96936729297347051624e-4, 8.28352392107440799803e-2, 1.23953371646414299388e0,
          5.44725003058768775090e0, 8.74716500199817011941e0, 5.30324038235394892183e0,
          9.99999999999999997821e-1)
_J0_PQ = (9.24408810558863637013e-4, 8.56288474354474431428e-2, 1.25352743901058953537e0,
          5.47097740330417105182e0, 8.76190883237069594232e0, 5.30605288235394617618e0,
          1.00000000000000000218e0)
_J0_QP = (-1.13663838898469149931e-2, -1.28252718670509318512e0, -1.95539544257735972385e1,
          -9.32060152123768231369e1, -1.77681167980488050595e2, -1.47077505154951170175e2,
          -5.14105326766599330220e1, -6.05014350600728481186e0)
_J0_QQ = (6.43178256118178023184e1, 8.56430025976980587198e2, 3.88240183605401609683e3,  # monic
          7.24046774195652478189e3, 5.93072701187316984827e3, 2.06209331660327847417e3,
          2.42005740240291393179e2)

# j1.c: J1 = x (z - r1)(z - r2) RP(z) / RQ(z) on [0, 5]; Y1 = x YP(z) / YQ(z) + (2 / pi)
# (J1(x) log(x) - 1 / x) there; P, Q as for order 0.
_J1_R1, _J1_R2 = 1.46819706421238932572e1, 4.92184563216946036703e1
_J1_RP = (-8.99971225705559398224e8, 4.52228297998194034323e11, -7.27494245221818276015e13,
          3.68295732863852883286e15)
_J1_RQ = (6.20836478118054335476e2, 2.56987256757748830383e5, 8.35146791431949253037e7,  # monic
          2.21511595479792499675e10, 4.74914122079991414898e12, 7.84369607876235854894e14,
          8.95222336184627338078e16, 5.32278620332680085395e18)
_J1_YP = (1.26320474790178026440e9, -6.47355876379160291031e11, 1.14509511541823727583e14,
          -8.12770255501325109621e15, 2.02439475713594898196e17, -7.78877196265950026825e17)
_J1_YQ = (5.94301592346128195359e2, 2.35564092943068577943e5, 7.34811944459721705660e7,  # monic
          1.87601316108706159478e10, 3.88231277496238566008e12, 6.20557727146953693363e14,
          6.87141087355300489866e16, 3.97270608116560655612e18)
_J1_PP = (7.62125616208173112003e-4, 7.31397056940917570436e-2, 1.12719608129684925192e0,
          5.11207951146807644818e0, 8.42404590141772420927e0, 5.21451598682361504063e0,
          1.00000000000000000254e0)
_J1_PQ = (5.71323128072548699714e-4, 6.88455908754495404082e-2, 1.10514232634061696926e0,
          5.07386386128601488557e0, 8.39985554327604159757e0, 5.20982848682361821619e0,
          9.99999999999999997461e-1)
_J1_QP = (5.10862594750176621635e-2, 4.98213872951233449420e0, 7.58238284132545283818e1,
          3.66779609360150777800e2, 7.10856304998926107277e2, 5.97489612400613639965e2,
          2.11688757100572135698e2, 2.52070205858023719784e1)
_J1_QQ = (7.42373277035675149943e1, 1.05644886038262816351e3, 4.98641058337653607651e3,  # monic
          9.56231892404756170795e3, 7.99704160447350683650e3, 2.82619278517639096600e3,
          3.36093607810698293419e2)

#: float32's I0 and I1 / x on [0, 8]: the power series sum q^k / (k! (k + n)!), q = x^2 / 4, of
#: positive terms (no cancellation: within 3 eps, where the Chebyshev series, whose terms sum to
#: 40 times I1e there, lose 11 in float32 arithmetic); 16 terms: the rest is below 1e-10 relative
_I_POWER = tuple(tuple(0.5 ** n / (math.factorial(k) * math.factorial(k + n)) for k in range(15, -1, -1))
                 for n in (0, 1))
_TWO_OVER_PI = 2 / math.pi
_INV_SQRT_PI = 1 / math.sqrt(math.pi)
#: where the series and the asymptotic forms meet
_I_SPLIT, _K_SPLIT, _J_SPLIT = 8.0, 2.0, 5.0
#: below it J0 is 1 - x^2 / 4 (the rational form's rounding is larger there; Cephes' cut)
_J0_TINY = 1e-5
#: float32 drops a Chebyshev series' leading terms while their absolute sum stays below this
_FLOAT32_DROP = 2.0 ** -40


# -- evaluation ---------------------------------------------------------------------------

def _work(name: str, x: Tensor) -> tuple[Tensor, bool]:
    """``x`` in the dtype the formulas run in (float64 for a float64 result, else float32), and
    whether that is float64."""
    from ... import _dtypes

    wide = result_dtype(name, x) is _dtypes.float64
    return as_dtype(x, _dtypes.float64 if wide else _dtypes.float32), wide


def _where(cond: Tensor, a: Any, b: Any) -> Tensor:
    """``where`` with a Python number passed as a 0-d tensor of the other side's dtype (the
    kernels take much longer on a Python scalar operand)."""
    if not isinstance(a, Tensor):
        a = scalar_like(a, b)
    elif not isinstance(b, Tensor):
        b = scalar_like(b, a)
    return op("where")(cond, a, b)


def _terms(coefs: tuple[float, ...], wide: bool) -> tuple[float, ...]:
    """The Chebyshev coefficients worth evaluating: all in float64; in float32 without the leading
    (highest-order) ones whose absolute sum is below ``_FLOAT32_DROP`` (|T_k| <= 1: that bounds the
    change, ~1e-12 absolute, 1e5 times below float32's rounding of the functions built on them)."""
    if wide:
        return coefs
    dropped, start = 0.0, 0
    while start < len(coefs) - 2 and dropped + abs(coefs[start]) < _FLOAT32_DROP:
        dropped += abs(coefs[start])
        start += 1
    return coefs[start:]


def _chebyshev(t: Tensor, coefs: tuple[float, ...], wide: bool) -> Tensor:
    """Cephes' ``chbevl``: Clenshaw's recurrence ``b0 = t b1 - b2 + c`` for the series
    ``sum' c_k T_k(t / 2)``, ``t`` in [-2, 2] (the first term halved: the result is (b0 - b2) / 2)."""
    coefs = _terms(coefs, wide)
    b2: Any = 0.0
    b1: Any = coefs[0]
    b0: Any = t * b1 + coefs[1]
    for c in coefs[2:]:
        b2, b1 = b1, b0
        b0 = t * b1 + (c - b2) if not isinstance(b2, Tensor) else t * b1 - b2 + c
    return (b0 - b2) * 0.5


def _polynomial(z: Tensor, coefs: tuple[float, ...], monic: bool = False) -> Tensor:
    """Horner's rule for ``coefs`` (highest order first); ``monic``: a leading 1 not listed."""
    p = z + coefs[0] if monic else z * coefs[0] + coefs[1]
    for c in coefs[1 if monic else 2:]:
        p = p * z + c
    return p


def _rational(z: Tensor, num: tuple[float, ...], den: tuple[float, ...], monic_den: bool) -> Tensor:
    return _polynomial(z, num) / _polynomial(z, den, monic_den)


# -- I0, I1 and their scaled forms ---------------------------------------------------------

def _i(x: Tensor, order: int, scaled: bool, wide: bool) -> Tensor:
    """Cephes' i0/i0e/i1/i1e (float32: the power series below 8, see ``_I_POWER``)."""
    ax = op("abs")(x)
    small = op("le")(ax, _I_SPLIT)
    xl = _where(small, _I_SPLIT, ax)
    outer = _chebyshev(32.0 / xl - 2.0, _I0_FAR if order == 0 else _I1_FAR, wide) / op("sqrt")(xl)
    if not scaled:
        outer = op("exp")(xl) * outer
    if order == 1:
        outer = _odd(x, outer)
    xs = _where(small, ax, _I_SPLIT)
    if wide:
        inner = _chebyshev(xs * 0.5 - 2.0, _I0_NEAR if order == 0 else _I1_NEAR, wide)
        if not scaled:
            inner = inner * op("exp")(xs)
    else:
        inner = _polynomial(xs * xs * 0.25, _I_POWER[order])
        if scaled:
            inner = inner * op("exp")(-xs)
    if order == 1:
        # times the signed x: I1 is odd, and its slope 1/2 at 0 reaches the gradient (through
        # |x| it would be 0); + 0.0 makes -0 give +0, as PyTorch's kernel
        inner = inner * _where(small, x, _I_SPLIT) + 0.0
    return _where(small, inner, outer)


def _odd(x: Tensor, magnitude: Tensor) -> Tensor:
    """``magnitude`` with the sign of ``x``."""
    return _where(op("lt")(x, 0), -magnitude, magnitude)


_I_USES = "abs le where mul add sub div sqrt"


@decomposition("special_i0e", _I_USES + " neg exp")
def _i0e(x: Tensor) -> Tensor:
    """``exp(-|x|) I0(x)``."""
    x, wide = _work("special_i0e", x)
    return _i(x, 0, True, wide)


@decomposition("i0", _I_USES + " exp")
def _i0(x: Tensor) -> Tensor:
    """``I0(x) = exp(|x|) I0e(x)``: +inf once ``exp`` overflows, NaN at +-inf (as PyTorch)."""
    x, wide = _work("i0", x)
    return _i(x, 0, False, wide)


@decomposition("special_modified_bessel_i0", _I_USES + " exp")
def _modified_i0(x: Tensor) -> Tensor:
    """``I0(x)``, the same function as ``i0``."""
    x, wide = _work("special_modified_bessel_i0", x)
    return _i(x, 0, False, wide)


@decomposition("special_i1e", _I_USES + " lt neg exp")
def _i1e(x: Tensor) -> Tensor:
    """``exp(-|x|) I1(x)``."""
    x, wide = _work("special_i1e", x)
    return _i(x, 1, True, wide)


@decomposition("special_i1", _I_USES + " lt neg exp")
def _i1(x: Tensor) -> Tensor:
    """``I1(x) = exp(|x|) I1e(x)``."""
    x, wide = _work("special_i1", x)
    return _i(x, 1, False, wide)


@decomposition("special_modified_bessel_i1", _I_USES + " lt neg exp")
def _modified_i1(x: Tensor) -> Tensor:
    """``I1(x)``, the same function as ``special_i1``."""
    x, wide = _work("special_modified_bessel_i1", x)
    return _i(x, 1, False, wide)


# -- K0, K1 and their scaled forms ---------------------------------------------------------

def _positive_only(x: Tensor, value: Tensor, at_zero: float) -> Tensor:
    """``value`` for x > 0, ``at_zero`` at +-0, NaN below 0 and for NaN (the K and Y functions)."""
    elsewhere = _where(op("eq")(x, 0), scalar_like(at_zero, value), scalar_like(math.nan, value))
    return _where(op("gt")(x, 0), value, elsewhere)


def _k(x: Tensor, order: int, scaled: bool, wide: bool) -> Tensor:
    """Cephes' k0/k0e/k1/k1e for x > 0 (other x: see :func:`_positive_only`)."""
    small = op("le")(x, _K_SPLIT)
    # the near branch on (0, 2], 1 elsewhere (also where x <= 0, whose result is fixed after)
    xs = _where(small & op("gt")(x, 0), x, 1.0)
    xl = _where(small, _K_SPLIT, x)
    # exp(-x) I(x) on (0, 2], the near ranges of the I series
    scaled_i = _chebyshev(xs * 0.5 - 2.0, _I0_NEAR if order == 0 else _I1_NEAR, wide)
    if order == 1:
        scaled_i = scaled_i * xs
    grow = op("exp")(xs)
    log_half = op("log")(xs * 0.5)
    t = xs * xs - 2.0
    if order == 0:
        near = _chebyshev(t, _K0_NEAR, wide) - log_half * (grow * scaled_i)
    else:
        near = log_half * (grow * scaled_i) + _chebyshev(t, _K1_NEAR, wide) / xs
    if scaled:
        near = near * grow
    far = _chebyshev(8.0 / xl - 2.0, _K0_FAR if order == 0 else _K1_FAR, wide) / op("sqrt")(xl)
    if not scaled:
        far = far * op("exp")(-xl)
    return _positive_only(x, _where(small, near, far), math.inf)


_K_USES = "le gt eq bitwise_and where mul add sub div exp log sqrt"


@decomposition("special_modified_bessel_k0", _K_USES + " neg")
def _k0(x: Tensor) -> Tensor:
    """``K0(x)``: +inf at 0, NaN below."""
    x, wide = _work("special_modified_bessel_k0", x)
    return _k(x, 0, False, wide)


@decomposition("special_modified_bessel_k1", _K_USES + " neg")
def _k1(x: Tensor) -> Tensor:
    """``K1(x)``: +inf at 0, NaN below."""
    x, wide = _work("special_modified_bessel_k1", x)
    return _k(x, 1, False, wide)


@decomposition("special_scaled_modified_bessel_k0", _K_USES)
def _k0e(x: Tensor) -> Tensor:
    """``exp(x) K0(x)``: +inf at 0, NaN below."""
    x, wide = _work("special_scaled_modified_bessel_k0", x)
    return _k(x, 0, True, wide)


@decomposition("special_scaled_modified_bessel_k1", _K_USES)
def _k1e(x: Tensor) -> Tensor:
    """``exp(x) K1(x)``: +inf at 0, NaN below."""
    x, wide = _work("special_scaled_modified_bessel_k1", x)
    return _k(x, 1, True, wide)


# -- J0, J1, Y0, Y1 ------------------------------------------------------------------------

def _hankel(xl: Tensor, order: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """For ``xl >= 5``: ``P``, ``(5 / x) Q``, ``sin x``, ``cos x``."""
    pp, pq, qp, qq = (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ) if order == 0 else (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ)
    w = 5.0 / xl
    z = w * w
    return (_rational(z, pp, pq, False), w * _rational(z, qp, qq, True), op("sin")(xl), op("cos")(xl))


def _j0_near(xs: Tensor) -> Tensor:
    """J0 on [-5, 5]."""
    z = xs * xs
    value = (z - _J0_R1) * (z - _J0_R2) * _rational(z, _J0_RP, _J0_RQ, True)
    return _where(op("lt")(op("abs")(xs), _J0_TINY), 1.0 - z * 0.25, value)


def _j1_near(xs: Tensor) -> Tensor:
    """J1 on [-5, 5] (odd in ``xs``: -0 at -0)."""
    z = xs * xs
    return _rational(z, _J1_RP, _J1_RQ, True) * xs * ((z - _J1_R1) * (z - _J1_R2))


_J_USES = "abs le lt where mul add sub div sqrt sin cos"


@decomposition("special_bessel_j0", _J_USES)
def _j0(x: Tensor) -> Tensor:
    """``J0(x)``; NaN at +-inf (as PyTorch)."""
    x, _ = _work("special_bessel_j0", x)
    ax = op("abs")(x)
    small = op("le")(ax, _J_SPLIT)
    near = _j0_near(_where(small, ax, 1.0))
    xl = _where(small, _J_SPLIT, ax)
    p, wq, s, c = _hankel(xl, 0)
    # cos(x - pi/4) = (cos x + sin x) / sqrt 2, sin(x - pi/4) = (sin x - cos x) / sqrt 2
    far = (p * (c + s) - wq * (s - c)) * (_INV_SQRT_PI / op("sqrt")(xl))
    return _where(small, near, far)


@decomposition("special_bessel_j1", _J_USES + " neg")
def _j1(x: Tensor) -> Tensor:
    """``J1(x)``, odd; NaN at +-inf (as PyTorch)."""
    x, _ = _work("special_bessel_j1", x)
    ax = op("abs")(x)
    small = op("le")(ax, _J_SPLIT)
    near = _j1_near(_where(small, x, 1.0))
    xl = _where(small, _J_SPLIT, ax)
    p, wq, s, c = _hankel(xl, 1)
    # cos(x - 3 pi/4) = (sin x - cos x) / sqrt 2, sin(x - 3 pi/4) = -(sin x + cos x) / sqrt 2
    far = (p * (s - c) + wq * (s + c)) * (_INV_SQRT_PI / op("sqrt")(xl))
    return _where(small, near, _odd(x, far))


def _y(x: Tensor, order: int) -> Tensor:
    """Cephes' y0/y1 for x > 0; -inf at 0, NaN below and at NaN."""
    small = op("le")(x, _J_SPLIT)
    xs = _where(small & op("gt")(x, 0), x, 1.0)
    xl = _where(small, _J_SPLIT, x)
    z = xs * xs
    log_x = op("log")(xs)
    if order == 0:
        near = _rational(z, _J0_YP, _J0_YQ, True) + _TWO_OVER_PI * log_x * _j0_near(xs)
    else:
        near = xs * _rational(z, _J1_YP, _J1_YQ, True) + _TWO_OVER_PI * (_j1_near(xs) * log_x - 1.0 / xs)
    p, wq, s, c = _hankel(xl, order)
    if order == 0:
        # sin(x - pi/4) = (sin x - cos x) / sqrt 2, cos(x - pi/4) = (cos x + sin x) / sqrt 2
        far = p * (s - c) + wq * (c + s)
    else:
        far = wq * (s - c) - p * (s + c)
    far = far * (_INV_SQRT_PI / op("sqrt")(xl))
    return _positive_only(x, _where(small, near, far), -math.inf)


_Y_USES = "le gt eq bitwise_and where mul add sub div log sqrt sin cos"


@decomposition("special_bessel_y0", _Y_USES + " abs lt")
def _y0(x: Tensor) -> Tensor:
    """``Y0(x)``: -inf at 0, NaN below and at +inf (as PyTorch)."""
    x, _ = _work("special_bessel_y0", x)
    return _y(x, 0)


@decomposition("special_bessel_y1", _Y_USES)
def _y1(x: Tensor) -> Tensor:
    """``Y1(x)``: -inf at 0, NaN below and at +inf (as PyTorch)."""
    x, _ = _work("special_bessel_y1", x)
    return _y(x, 1)


# -- the spherical j0 ----------------------------------------------------------------------

#: sin(x) / x = sum (-1)^k x^(2k) / (2k + 1)!, k = 0..6: below 0.5 the next term is < 5e-17
_SINC_SERIES = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(7))
_SINC_SPLIT = 0.5


@decomposition("special_spherical_bessel_j0", "abs lt eq where mul add div sin")
def _spherical_j0(x: Tensor) -> Tensor:
    """``sin(x) / x``: its Taylor series below 0.5 (1 at 0), 0 at +-inf (as PyTorch)."""
    x, _ = _work("special_spherical_bessel_j0", x)
    ax = op("abs")(x)
    small = op("lt")(ax, _SINC_SPLIT)
    z = _where(small, x, 0.0)
    z = z * z
    series = _polynomial(z, _SINC_SERIES[::-1])
    xl = _where(small, 1.0, x)
    return _where(small, series, _where(op("eq")(ax, math.inf), 0.0, op("sin")(xl) / xl))
