# Writes weight_ref.txt: the envelope's left weight q/(p+q) of
# internal/polyagamma (leftWeight, PSW 2013 §4) at t = 0.64, to 40
# significant digits, and 1 − w = p/(p+q) likewise, with mpmath at 60
# digits, at z = 0, 0.0125, ..., 40 and at 400 pseudo-random z in (0, 40)
# (fixed seed). Read by TestWeightTable.
# Run: python3 weight_ref.py > weight_ref.txt
import random
import mpmath as mp

mp.mp.dps = 60
t = mp.mpf("0.64")


def weight(z):
    z = mp.mpf(z)
    k = mp.pi**2 / 8 + z * z / 2
    p = mp.pi / (2 * k) * mp.exp(-k * t)
    st = mp.sqrt(t)
    if z == 0:
        q = 2 * mp.erfc(1 / mp.sqrt(2 * t))
    else:
        q = 2 * mp.exp(-z) * (mp.ncdf((t * z - 1) / st) + mp.exp(2 * z) * mp.ncdf(-(t * z + 1) / st))
    return q / (p + q), p / (p + q)


zs = [i / 80 for i in range(0, 3201)]
rnd = random.Random(41)
zs += [rnd.uniform(0, 40) for _ in range(400)]
for z in zs:
    w, cw = weight(z)
    print(repr(float(z)), mp.nstr(w, 40), mp.nstr(cw, 40))
