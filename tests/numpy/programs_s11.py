"""Thirty-four small scientific programs written as their authors write them, in
idioms the earlier collections (programs_as_published.py, programs_s7.py ..
programs_s10.py) leave out: ``np.emath`` where a square root or an inverse
cosine leaves the real line (a damped oscillator's characteristic roots,
total internal reflection, a Kronig-Penney band gap, Cardano's formula, a
waveguide's evanescent modes); ``np.logaddexp.reduce`` and ``.accumulate``
(an HMM's forward pass in log space, a survival model's running
log-hazard); ``np.polydiv`` (a partial-fraction residue, deflating a
characteristic polynomial) and ``poly1d`` division; ``Chebyshev.fit`` and
``Legendre`` series converted to the power basis; ``gaussian_kde`` of
simulated samples, with weights, of 2-D data and with Silverman's rule;
``scipy.signal.welch`` of an AR(2) process and of an lfilter response, and
``find_peaks`` of a spectrum (heights, prominences, widths);
``rng.multivariate_normal`` with a parameterised covariance (a portfolio,
a Gaussian-process prior through the legacy RandomState, a Cholesky draw);
``scipy.linalg.eigh(K, M)`` for the modes of a spring-mass chain and a
shear building, and ``eigvalsh`` of a pencil; plus an RK4 loop updating a
plain state in place, a fixed-point iteration with a tolerance, a
pseudo-spectral Burgers step, Planck's law integrated with
``np.trapezoid``, a logistic posterior summed over a list, a heat
exchanger's effectiveness by ``np.where``, a chirp's spectral entropy
(welch and ``scipy.stats.entropy``), a KDE bandwidth by leave-one-out
likelihood, Tikhonov filter factors from ``eigh(A^T A, L^T L)`` and the
turning points of a fitted cubic by ``Polynomial.deriv().roots()``.

None of them knows about adsim; tests/numpy/test_user_programs_s11.py
differentiates them as they are."""
import numpy as np
from numpy.polynomial import Chebyshev, Legendre, Polynomial
import scipy.linalg as sla
import scipy.signal as signal
from scipy.special import expit
from scipy.stats import gaussian_kde


# ---- 1. a damped oscillator's characteristic roots by the quadratic formula ------------------

def oscillator_decay(params):
    """Slowest decay rate and ringing frequency of m x'' + c x' + k x = 0."""
    m, c, k = params
    disc = np.emath.sqrt(c ** 2 - 4 * m * k)      # complex when underdamped
    roots = np.array([(-c + disc) / (2 * m), (-c - disc) / (2 * m)])
    rate = -np.max(roots.real)
    freq = np.abs(roots.imag).max()
    return rate + 0.1 * freq


# ---- 2. total internal reflection: Fresnel coefficients with emath.sqrt -----------------------

def tir_reflectance(params, angles=np.radians([20.0, 35.0, 50.0, 65.0])):
    """Mean s-polarised reflectance of a glass-to-medium interface over a
    few angles, some past the critical angle (cos theta_t imaginary)."""
    n1, n2 = params
    sin_t = n1 / n2 * np.sin(angles)
    cos_t = np.emath.sqrt(1 - sin_t ** 2)
    cos_i = np.cos(angles)
    rs = (n1 * cos_i - n2 * cos_t) / (n1 * cos_i + n2 * cos_t)
    return np.mean(np.abs(rs) ** 2)


# ---- 3. Kronig-Penney: the Bloch wavenumber in a band gap by emath.arccos ----------------------

def band_gap_attenuation(params, energies=np.linspace(0.5, 6.0, 12)):
    """Total attenuation (imaginary Bloch wavenumber) over an energy range
    for a delta-comb potential of strength P, lattice constant a."""
    P, a = params
    k = np.sqrt(energies)
    rhs = np.cos(k * a) + P * np.sin(k * a) / (k * a)
    q = np.emath.arccos(rhs) / a
    return np.sum(np.abs(q.imag))


# ---- 4. Cardano's formula for a cubic equation of state ---------------------------------------

def vdw_volume(params, T=300.0, P=20.0):
    """Largest real molar volume of a van der Waals gas by Cardano's formula
    (one real root here: the discriminant is positive)."""
    a, b = params
    R = 0.08314
    # V^3 - (b + RT/P) V^2 + a/P V - ab/P = 0, depressed: t^3 + p t + q = 0
    A2, A1, A0 = -(b + R * T / P), a / P, -a * b / P
    p = A1 - A2 ** 2 / 3
    q = 2 * A2 ** 3 / 27 - A2 * A1 / 3 + A0
    d = np.emath.sqrt((q / 2) ** 2 + (p / 3) ** 3)
    u = np.cbrt(-q / 2 + d.real)
    v = np.cbrt(-q / 2 - d.real)
    return u + v - A2 / 3


# ---- 5. a slab waveguide's modes: propagating and evanescent by emath.sqrt ---------------------

def waveguide_transmission(params, length=0.5, n_modes=6):
    """Power carried through a length of guide by equally excited modes:
    propagating modes pass, evanescent ones decay."""
    k0, width = params
    kx = np.arange(1, n_modes + 1) * np.pi / width
    kz = np.emath.sqrt(k0 ** 2 - kx ** 2)
    return np.sum(np.abs(np.exp(1j * kz * length)) ** 2) / n_modes


# ---- 6. an HMM's forward pass in log space with logaddexp.reduce ------------------------------

def hmm_loglik(params, obs=np.array([0.2, 1.1, 0.9, -0.3, 0.1, 1.4, 1.2])):
    """Log-likelihood of observations under a two-state Gaussian HMM."""
    stay, mu_hi, sigma = params
    logA = np.log(np.array([[stay, 1 - stay], [1 - stay, stay]]))
    means = np.array([0.0, mu_hi])
    logB = -0.5 * ((obs[:, None] - means) / sigma) ** 2 - np.log(sigma * np.sqrt(2 * np.pi))
    alpha = np.log([0.5, 0.5]) + logB[0]
    for t in range(1, len(obs)):
        alpha = np.logaddexp.reduce(alpha[:, None] + logA, axis=0) + logB[t]
    return np.logaddexp.reduce(alpha)


# ---- 7. a survival model's running log-hazard with logaddexp.accumulate -----------------------

def survival_at_end(params, t=np.linspace(0.0, 5.0, 11)):
    """log of the cumulative sum of piecewise hazards, accumulated in log space."""
    log_h0, beta = params
    log_hazard = log_h0 + beta * t + np.log(np.gradient(t))
    log_cum = np.logaddexp.accumulate(log_hazard)
    return np.exp(-np.exp(log_cum))[-3:].sum()


# ---- 8. a partial-fraction residue by np.polydiv ------------------------------------------

def step_response_residue(params):
    """Residue of G(s) = (b1 s + b0) / (s^2 + 2 z w s + w^2) / s at the
    integrator pole, after removing the proper part by polynomial division."""
    b1, b0, z, w = params
    num = np.array([b1, b0, 0.0]) * 1.0 + np.array([0.0, 0.0, 1.0])    # + s^0 term
    den = np.polymul([1.0, 2 * z * w, w ** 2], [1.0, 0.0])
    q, r = np.polydiv(np.polymul(num, [1.0, 1.0]), den)
    return np.polyval(r, -0.5) / np.polyval(np.polyder(den), -0.5) + q.sum()


# ---- 9. deflating a characteristic polynomial by a known root --------------------------------

def deflated_roots_spread(params):
    """Companion polynomial of a 3-state chain, deflated by its root at 0
    (poly1d division), then the remaining quadratic's discriminant."""
    k1, k2 = params
    p = np.poly1d([1.0, k1 + k2 + 1.0, k1 * k2 + k1, 0.0])
    quotient, remainder = p / np.poly1d([1.0, 0.0])
    a, b, c = quotient.coeffs
    return (b ** 2 - 4 * a * c) + np.sum(remainder.coeffs ** 2)


# ---- 10. a Chebyshev calibration fit converted to power-basis coefficients ------------------

def calibration_slope(params, volts=np.linspace(0.0, 5.0, 9)):
    """Thermistor calibration: temperatures from a model, a cubic Chebyshev
    fit, its power-basis coefficients (what the firmware stores)."""
    beta, r0 = params
    resistance = r0 * np.exp(-0.4 * volts)
    temps = 1.0 / (1.0 / 298.15 + np.log(resistance / 10.0) / beta) - 273.15   # R25 = 10 kOhm
    fit = Chebyshev.fit(volts, temps, 3)
    coef = fit.convert(kind=Polynomial).coef
    return coef[1] + 0.1 * coef[2]


# ---- 11. a Legendre expansion of an angular distribution, to powers of cos -----------------

def angular_power_coeffs(params):
    """Scattering distribution 1 + a1 P1 + a2 P2 in powers of mu."""
    a1, a2 = params
    powers = Legendre([1.0, a1, a2]).convert(kind=Polynomial).coef
    return powers[0] + 2 * powers[1] + 3 * powers[2]


# ---- 12. a synthetic-likelihood with gaussian_kde of simulated samples -------------------------

def kde_synthetic_loglik(params, observed=np.array([0.4, 1.2, 0.9, 1.7])):
    """Simulate 40 draws with common random numbers, estimate their density
    by a Gaussian KDE (Scott's bandwidth), score the observations."""
    mu, log_sigma = params
    z = np.random.default_rng(11).standard_normal(40)
    samples = mu + np.exp(log_sigma) * z
    kde = gaussian_kde(samples)
    return np.sum(kde.logpdf(observed))


# ---- 13. an importance-weighted 2-D KDE, tempered ----------------------------------------

def tempered_density(params, points=np.array([[0.2, -0.3], [0.5, 0.1]])):
    """Density at two points of weighted samples, weights tempered by 1/T."""
    T, shift = params
    rng = np.random.default_rng(5)
    xy = rng.standard_normal((2, 30))
    xy[0] += shift
    logw = -0.5 * np.sum(xy ** 2, axis=0) / T
    kde = gaussian_kde(xy, weights=np.exp(logw - logw.max()))
    return np.sum(kde(points))


# ---- 14. Silverman's bandwidth for a bimodal mixture -----------------------------------------

def mixture_density_peak(params, grid=np.linspace(-3, 3, 7)):
    mu1, mu2 = params
    z = np.random.default_rng(8).standard_normal(50)
    data = np.concatenate([mu1 + 0.5 * z[:25], mu2 + 0.7 * z[25:]])
    kde = gaussian_kde(data, bw_method="silverman")
    return kde.pdf(grid).max()


# ---- 15. the Welch spectrum of an AR(2) process --------------------------------------------

def ar2_band_power(params, n=256):
    """Fraction of an AR(2) process's power in the low band, simulated with
    fixed innovations and estimated by Welch's method."""
    a1, a2 = params
    e = np.random.default_rng(3).standard_normal(n)
    x = signal.lfilter([1.0], [1.0, -a1, -a2], e)
    f, pxx = signal.welch(x, fs=1.0, nperseg=64)
    low = f < 0.15
    return np.sum(pxx[low]) / np.sum(pxx)


# ---- 16. find_peaks of a Lorentzian spectrum: heights, prominences and widths ----------------

def resolved_doublet(params, nu=np.linspace(0.0, 10.0, 121)):
    """Height ratio and width of the two strongest lines of a spectrum of
    three Lorentzians, found by find_peaks with a prominence threshold."""
    g, shift = params
    centres = np.array([2.5, 5.0 + shift, 7.6])
    amps = np.array([1.0, 0.8, 0.5])
    spec = np.sum(amps[:, None] * g ** 2 / ((nu - centres[:, None]) ** 2 + g ** 2), axis=0)
    peaks, props = signal.find_peaks(spec, prominence=0.05, width=1)
    order = np.argsort(props["prominences"])[::-1]
    top = peaks[order[:2]]
    return spec[top[1]] / spec[top[0]] + 0.01 * props["widths"][order[0]]


# ---- 17. a resonance's quality factor from a Welch spectrum and find_peaks --------------------

def resonance_q(params, n=512, fs=50.0):
    """A damped oscillator driven by noise (a second-order filter), its Welch
    spectrum, the peak's height over its width at half prominence."""
    f0, zeta = params
    w = 2 * np.pi * f0 / fs
    r = np.exp(-zeta * w)
    a = [1.0, -2 * r * np.cos(w * np.sqrt(1 - zeta ** 2)), r ** 2]
    noise = np.random.default_rng(21).standard_normal(n)
    y = signal.lfilter([1.0 - r], a, noise)
    f, pxx = signal.welch(y, fs=fs, nperseg=128, detrend="linear")
    peaks, props = signal.find_peaks(pxx, height=0.2 * pxx.max(), width=1.0)
    k = np.argmax(props["peak_heights"])
    return props["peak_heights"][k] / props["widths"][k]


# ---- 18. a portfolio's simulated losses with a parameterised covariance ----------------------

def expected_shortfall_proxy(params, n=400):
    """Smoothed tail loss of a three-asset portfolio, returns drawn by
    rng.multivariate_normal with volatilities and a correlation as parameters."""
    s1, s2, rho = params
    vol = np.array([s1, s2, 0.15])
    corr = np.array([[1.0, rho, 0.2], [rho, 1.0, 0.1], [0.2, 0.1, 1.0]])
    cov = corr * np.outer(vol, vol)
    rng = np.random.default_rng(2024)
    r = rng.multivariate_normal(np.array([0.05, 0.07, 0.03]), cov, size=n)
    loss = -r @ np.array([0.5, 0.3, 0.2])
    return np.log(np.mean(np.exp(8.0 * loss))) / 8.0


# ---- 19. Gaussian-process prior draws through the legacy RandomState --------------------------

def gp_prior_roughness(params, x=np.linspace(0.0, 1.0, 6)):
    """Mean squared increment of GP prior draws with a squared-exponential
    kernel (length scale, amplitude), sampled with np.random.RandomState."""
    ell, amp = params
    K = amp ** 2 * np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ell ** 2) + 0.1 * np.eye(6)
    rs = np.random.RandomState(7)
    draws = rs.multivariate_normal(np.zeros(6), K, size=20)
    return np.mean(np.diff(draws, axis=1) ** 2)


# ---- 20. correlated measurement errors drawn by Cholesky ------------------------------------

def calibrated_bias(params, n=100):
    """Average of a nonlinear response to correlated errors (AR(1) covariance
    with correlation phi, scale s), drawn with method='cholesky'."""
    phi, s = params
    idx = np.arange(4)
    cov = s ** 2 * phi ** np.abs(idx[:, None] - idx[None, :])
    e = np.random.default_rng(99).multivariate_normal(np.zeros(4), cov, size=n,
                                                       method="cholesky")
    return np.mean(np.tanh(1.0 + e).sum(axis=1))


# ---- 21. a spring-mass chain's natural frequencies by eigh(K, M) -------------------------------

def chain_frequency_misfit(params, measured=np.array([0.42, 1.13, 1.71])):
    """Squared misfit of the natural frequencies of a fixed-free 3-mass chain."""
    k1, k2, k3 = params
    K = np.array([[k1 + k2, -k2, 0.0], [-k2, k2 + k3, -k3], [0.0, -k3, k3]])
    M = np.diag([1.0, 1.5, 0.8])
    w2 = sla.eigh(K, M, eigvals_only=True)
    return np.sum((np.sqrt(w2) - measured) ** 2)


# ---- 22. a shear building's first mode shape and its participation --------------------------

def first_mode_participation(params):
    """Modal participation factor of the first mode of a 3-storey shear
    building, eigenvectors mass-normalised by eigh(K, M)."""
    k, m_top = params
    K = k * np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 1.0]])
    M = np.diag([1.0, 1.0, m_top])
    w2, phi = sla.eigh(K, M)
    first = phi[:, 0]
    gamma = first @ M @ np.ones(3)
    return gamma ** 2 / (first @ M @ first) + w2[0]


# ---- 23. buckling loads of a pencil by eigvalsh ---------------------------------------------

def critical_load(params):
    """Smallest eigenvalue of K x = lambda G x (stiffness against geometric
    stiffness) for a column of three segments with flexural stiffness EI."""
    EI, L = params
    h = L / 3
    K = EI / h ** 3 * np.array([[12.0, -6.0, 0.0], [-6.0, 8.0, -3.0], [0.0, -3.0, 4.0]])
    G = 1 / (30 * h) * np.array([[36.0, -3.0, 0.0], [-3.0, 8.0, -1.5], [0.0, -1.5, 4.0]])
    return sla.eigvalsh(K, G)[0]


# ---- 24. predator-prey by RK4 updating a plain state array in place ---------------------------

def lotka_volterra_final(params, dt=0.05, steps=60):
    a, b = params
    state = np.array([10.0, 5.0])               # plain initial populations

    def rhs(s):
        return np.array([a * s[0] - 0.1 * s[0] * s[1], 0.075 * s[0] * s[1] - b * s[1]])
    for _ in range(steps):
        k1 = rhs(state)
        k2 = rhs(state + 0.5 * dt * k1)
        k3 = rhs(state + 0.5 * dt * k2)
        k4 = rhs(state + dt * k3)
        state += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return state[0] / state[1]


# ---- 25. mean-field magnetisation by fixed-point iteration with a tolerance --------------------

def mean_field_magnetisation(params, tol=1e-12):
    """m = tanh((J z m + h) / T), iterated until the change is below tol."""
    J, h = params
    m, T = 0.5, 1.5
    for _ in range(500):
        m_new = np.tanh((J * 4 * m + h) / T)
        if abs(m_new - m) < tol:
            break
        m = m_new
    return m_new


# ---- 26. a pseudo-spectral Burgers step with rfft/irfft -----------------------------------------

def burgers_energy(params, n=32, steps=20, dt=0.01):
    nu, amp = params
    x = np.linspace(0, 2 * np.pi, n, endpoint=False)
    u = amp * np.sin(x)
    k = np.fft.rfftfreq(n, d=1.0 / n)
    for _ in range(steps):
        uh = np.fft.rfft(u)
        ux = np.fft.irfft(1j * k * uh, n)
        uxx = np.fft.irfft(-(k ** 2) * uh, n)
        u = u + dt * (-u * ux + nu * uxx)
    return 0.5 * np.mean(u ** 2)


# ---- 27. Planck's law integrated over a band with np.trapezoid ----------------------------------

def band_radiance_fraction(params, lam=np.linspace(0.3e-6, 3e-6, 200)):
    """Fraction of a black body's radiance in the visible band, temperature
    and emissivity slope as parameters."""
    T, slope = params
    h, c, kB = 6.626e-34, 2.998e8, 1.381e-23
    eps = 1.0 - slope * (lam - 0.3e-6) / 2.7e-6
    B = eps * 2 * h * c ** 2 / lam ** 5 / np.expm1(h * c / (lam * kB * T))
    visible = (lam > 0.4e-6) & (lam < 0.7e-6)
    return np.trapezoid(B * visible, lam) / np.trapezoid(B, lam)


# ---- 28. a logistic regression's log posterior summed over a list ------------------------------

def logistic_log_posterior(params, X=np.array([[1.0, 0.3], [1.0, -1.2], [1.0, 2.1], [1.0, 0.7],
                                                   [1.0, -0.4]]),
                           y=np.array([1, 0, 1, 1, 0])):
    w = params
    terms = [yi * np.log(expit(xi @ w)) + (1 - yi) * np.log1p(-expit(xi @ w))
             for xi, yi in zip(X, y)]
    return np.sum(terms) - 0.5 * np.dot(w, w) / 4.0


# ---- 29. a counter-flow heat exchanger's effectiveness by np.where ------------------------------

def exchanger_duty(params, UA=np.array([50.0, 200.0, 800.0])):
    """Heat duty at three conductances; the balanced case (Cr = 1) has its
    own formula, chosen by np.where."""
    C_hot, C_cold = params
    Cmin, Cmax = np.minimum(C_hot, C_cold), np.maximum(C_hot, C_cold)
    Cr = Cmin / Cmax
    ntu = UA / Cmin
    balanced = np.isclose(Cr, 1.0)
    Cr_safe = np.where(balanced, 0.5, Cr)
    decay = np.exp(-ntu * (1 - Cr_safe))
    eff = np.where(balanced, ntu / (1 + ntu), (1 - decay) / (1 - Cr_safe * decay))
    return np.sum(eff * Cmin * (90.0 - 20.0))


# ---- 30. radioactive decay chains: half-lives counted with emath.logn ---------------------------

def halvings_to_threshold(params, threshold=0.01):
    """Number of half-lives for each of two isotopes' activity to fall below
    a threshold, log base 2 of the ratio (np.emath.logn, real here)."""
    A1, A2 = params
    return np.sum(np.emath.logn(2, np.array([A1, A2]) / threshold))


# ---- 31. spectral entropy of a chirp by welch and scipy.stats.entropy ---------------------------

def spectral_entropy(params, n=128, fs=100.0):
    """Shannon entropy of the normalised Welch spectrum of a noisy chirp."""
    f0, rate = params
    from scipy.stats import entropy
    t = np.arange(n) / fs
    x = np.sin(2 * np.pi * (f0 + rate * t) * t) + 0.2 * np.random.default_rng(4).standard_normal(n)
    f, pxx = signal.welch(x, fs=fs, nperseg=32)
    return entropy(pxx / pxx.sum())


# ---- 32. a KDE bandwidth by leave-one-out likelihood ------------------------------------------

def loo_kde_score(params, data=np.array([0.3, 1.1, -0.2, 2.4, 0.8, 1.7, -1.0, 0.5])):
    """Leave-one-out log-likelihood of a Gaussian KDE whose bandwidth factor
    is exp(log_bw), with the data shifted by a drift parameter."""
    log_bw, drift = params
    x = data + drift * np.arange(data.size) / data.size
    total = 0.0
    for i in range(x.size):
        kde = gaussian_kde(np.delete(x, i), bw_method=np.exp(log_bw))
        total += kde.logpdf(x[i])[0]
    return total


# ---- 33. generalised Tikhonov filter factors from eigh(A^T A, L^T L) ----------------------------

def tikhonov_solution_norm(params, A=np.array([[1.0, 0.5, 0.1], [0.2, 1.2, 0.4], [0.1, 0.3, 0.9],
                                               [0.5, 0.1, 0.2]]),
                           b=np.array([1.0, 0.4, -0.3, 0.8])):
    """Norm of the regularised solution sum_i f_i (x_i^T A^T b) x_i with
    filter factors f_i = w_i / (w_i + alpha), (w, x) the generalised
    eigenpairs of A^T A and a smoothing operator's L^T L."""
    alpha, smooth = params
    L = np.array([[1.0, -smooth, 0.0], [0.0, 1.0, -smooth], [0.0, 0.0, 1.0]])
    w, X = sla.eigh(A.T @ A, L.T @ L)
    filt = w / (w + alpha)
    x = X @ (filt / w * (X.T @ A.T @ b))
    return np.linalg.norm(x)


# ---- 34. the turning points of a fitted cubic by Polynomial.deriv().roots() ---------------------

def turning_point_gap(params, t=np.linspace(-2.0, 2.0, 9)):
    """Distance between the two turning points of a cubic fitted to a
    response curve."""
    a, b = params
    y = a * t ** 3 - b * t + 0.1 * t ** 2
    p = Polynomial.fit(t, y, 3).convert()
    r = np.sort(p.deriv().roots().real)
    return r[1] - r[0]
