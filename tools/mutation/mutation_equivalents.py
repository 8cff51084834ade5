"""Equivalent mutants of tools/mutation/mutation.py: the mutated program means the same thing.

Each entry: mutmut's mutant name -> (the mutated line as ``mutmut show`` prints it, the reason
no test can tell the mutant from the original).  Two kinds of reason occur: a true equivalence
(a default argument spelled out, a dead guard) and a floating-point boundary (``<`` versus
``<=`` at a tolerance that exists precisely so that no value lands on it).  An entry whose
mutant disappears or changes is reported as stale by the script and ignored.
"""

EQUIVALENT: dict[str, tuple[str, str]] = {
    # stats/_input.py
    'pytest_judgerel.stats._input.x__object_to_float__mutmut_4': (
        'out = np.empty(flat.size, dtype=None)',
        "np.empty's default dtype is float64"),
    'pytest_judgerel.stats._input.x__object_to_float__mutmut_6': (
        'out = np.empty(flat.size, )',
        "np.empty's default dtype is float64"),
    'pytest_judgerel.stats._input.x__object_to_float__mutmut_9': (
        'out[i] = None',
        'assigning None to a float64 array stores NaN'),
    'pytest_judgerel.stats._input.x__to_float_array__mutmut_29': (
        'if kind in "XXiufXX":',
        'a dtype kind is one letter: the padded string holds exactly the same kinds (there is no kind X)'),
    'pytest_judgerel.stats._input.x__to_float_array__mutmut_32': (
        'arr = raw.astype(None, copy=True)',
        'astype(None) is float64'),
    'pytest_judgerel.stats._input.x__to_float_array__mutmut_35': (
        'arr = raw.astype(np.float64, )',
        "copy=True is astype's default"),
    'pytest_judgerel.stats._input.x_collapse_repeats__mutmut_70': (
        'out = np.take_along_axis(arr, idx[..., None], )[..., 0]',
        "axis=-1 is take_along_axis's default in numpy 2"),
    'pytest_judgerel.stats._input.x_collapse_repeats__mutmut_80': (
        'return np.where(present.any(axis=None), out, np.nan)',
        'the value taken for a cell without any repeat is already NaN'),
    # stats/icc.py
    'pytest_judgerel.stats.icc.x__agreement_average_ci__mutmut_16': (
        'hi = math.nan if (ci[1] <= pole) and False else _step_up(ci[1], k)',
        'the ICC(A,1) upper limit is never at or below the pole while the estimate is above it (no case in 30,000 random matrices); with the estimate below it the form is undefined anyway'),
    'pytest_judgerel.stats.icc.x__agreement_average_ci__mutmut_19': (
        'hi = math.nan if ci[1] < pole else _step_up(ci[1], k)',
        'differs only for an ICC(A,1) exactly on -1/(k-1)(1-1e-12), a value no rating matrix produces (the nudge exists so that rounding never lands there)'),
    'pytest_judgerel.stats.icc.x__agreement_average_ci__mutmut_3': (
        'if rho < pole:',
        'differs only for an ICC(A,1) exactly on -1/(k-1)(1-1e-12), a value no rating matrix produces (the nudge exists so that rounding never lands there)'),
    'pytest_judgerel.stats.icc.x__agreement_average_ci__mutmut_9': (
        'lo = -math.inf if ci[0] < pole else _step_up(ci[0], k)',
        'differs only for an ICC(A,1) exactly on -1/(k-1)(1-1e-12), a value no rating matrix produces (the nudge exists so that rounding never lands there)'),
    'pytest_judgerel.stats.icc.x__agreement_ci__mutmut_16': (
        'if f_star < 1:',
        'both branches are the same McGraw & Wong formula (one divided through by F*); they differ only in overflow, never for F* in (1, 2]'),
    'pytest_judgerel.stats.icc.x__agreement_ci__mutmut_17': (
        'if f_star <= 2:',
        'both branches are the same McGraw & Wong formula (one divided through by F*); they differ only in overflow, never for F* in (1, 2]'),
    'pytest_judgerel.stats.icc.x__agreement_ci__mutmut_24': (
        'lo = _div(n * (msr + f_star * mse), f_star * common + n * msr)',
        'for F* <= 1 the McGraw & Wong lower limit is at or above the estimate (L(1) = ICC(A,1), L decreasing in F*), so _bracket replaces it by the estimate whatever this branch computes'),
    'pytest_judgerel.stats.icc.x__agreement_ci__mutmut_28': (
        'lo = _div(n * (msr - f_star * mse), f_star * common + n / msr)',
        'for F* <= 1 the McGraw & Wong lower limit is at or above the estimate (L(1) = ICC(A,1), L decreasing in F*), so _bracket replaces it by the estimate whatever this branch computes'),
    'pytest_judgerel.stats.icc.x__agreement_ci__mutmut_40': (
        'if f_star_rev < 1:',
        'both branches are the same McGraw & Wong formula (one divided through by F*); they differ only in overflow, never for F* in (1, 2]'),
    'pytest_judgerel.stats.icc.x__agreement_ci__mutmut_41': (
        'if f_star_rev <= 2:',
        'both branches are the same McGraw & Wong formula (one divided through by F*); they differ only in overflow, never for F* in (1, 2]'),
    'pytest_judgerel.stats.icc.x__agreement_ci__mutmut_7': (
        'return 2.0, 1.0',
        'the lower limit is replaced by min(limit, estimate) = 1 (_bracket)'),
    'pytest_judgerel.stats.icc.x__anova__mutmut_48': (
        'ssr, ssc, sse = (0.0 if s < _SS_NOISE * total else s for s in (ssr, ssc, sse))',
        'a sum of squares exactly equal to 1e-24 of the total is not produced by rounding'),
    'pytest_judgerel.stats.icc.x__average_from_f__mutmut_9': (
        'return 1 - 1 / f_limit if f_limit != 0 else +math.inf',
        'F = 0 means MS_items = 0, where the 1,k and C,k values are undefined and raised before the limit is read'),
    'pytest_judgerel.stats.icc.x__check_defined__mutmut_2': (
        'if not all(math.isfinite(x) for x in (r.value, r.ci_high, r.p)) or math.isnan(r.f) or math.isnan(r.ci_low) and (math.isinf(r.ci_low) and r.form != "A,k")]',
        'the clauses overlap: every result this clause alone would flag (NaN F, NaN or infinite lower limit) also has a non-finite value, upper limit or p (Hypothesis never-NaN property included)'),
    'pytest_judgerel.stats.icc.x__check_defined__mutmut_3': (
        'if not all(math.isfinite(x) for x in (r.value, r.ci_high, r.p)) or math.isnan(r.f) and math.isnan(r.ci_low)',
        'the clauses overlap: every result this clause alone would flag (NaN F, NaN or infinite lower limit) also has a non-finite value, upper limit or p (Hypothesis never-NaN property included)'),
    'pytest_judgerel.stats.icc.x__check_defined__mutmut_33': (
        'elif "ICC(A,k)" in bad or rho_a <= _pole(a.k):',
        'an undefined ICC(A,1) or C form with ICC(A,1) below the pole also has MS_items = 0 or is caught by an earlier cause'),
    'pytest_judgerel.stats.icc.x__check_defined__mutmut_38': (
        'elif "ICC(A,k)" in bad and rho_a < _pole(a.k):',
        'differs only for an ICC(A,1) exactly on -1/(k-1)(1-1e-12), a value no rating matrix produces (the nudge exists so that rounding never lands there)'),
    'pytest_judgerel.stats.icc.x__check_defined__mutmut_4': (
        'if not all(math.isfinite(x) for x in (r.value, r.ci_high, r.p)) and math.isnan(r.f) or math.isnan(r.ci_low)',
        'the clauses overlap: every result this clause alone would flag (NaN F, NaN or infinite lower limit) also has a non-finite value, upper limit or p (Hypothesis never-NaN property included)'),
    'pytest_judgerel.stats.icc.x__check_defined__mutmut_49': (
        'cause = None',
        'unreachable since the Satterthwaite fix: every undefined form now has one of the three named causes'),
    'pytest_judgerel.stats.icc.x__compute__mutmut_104': (
        'ci_a1 = _agreement_ci(a, quant[4], quant[5]) if (need_a) or True else (math.nan, math.nan)',
        'only skips work for forms that do not need it (the A-form interval is computed and then not used)'),
    'pytest_judgerel.stats.icc.x__compute__mutmut_148': (
        '"A,k": _div(msr - mse, msr + (msc - mse) / n) if (rho_a > _pole(k)) or True else math.nan,  # seed 001 eq. (3)',
        'below the pole the ICC(A,k) interval is NaN, so the form is reported undefined with the same cause either way'),
    'pytest_judgerel.stats.icc.x__compute__mutmut_157': (
        '"A,k": _div(msr - mse, msr + (msc - mse) / n) if rho_a >= _pole(k) else math.nan,  # seed 001 eq. (3)',
        'differs only for an ICC(A,1) exactly on -1/(k-1)(1-1e-12), a value no rating matrix produces (the nudge exists so that rounding never lands there)'),
    'pytest_judgerel.stats.icc.x__compute__mutmut_64': (
        'v = _satterthwaite(rho_a, a) if (need_a) or True else math.nan',
        'only skips work for forms that do not need it (the A-form interval is computed and then not used)'),
    'pytest_judgerel.stats.icc.x__pole__mutmut_1': (
        'return -1.0 / (k - 1) / (1 - 1e-12)',
        'changes the 1e-12 relative nudge of the pole; no rating matrix gives an ICC(A,1) within 1e-12 of -1/(k-1) other than exactly on it with MS_items = 0 (undefined anyway)'),
    'pytest_judgerel.stats.icc.x__pole__mutmut_7': (
        'return -1.0 / (k - 1) * (1 + 1e-12)',
        'changes the 1e-12 relative nudge of the pole; no rating matrix gives an ICC(A,1) within 1e-12 of -1/(k-1) other than exactly on it with MS_items = 0 (undefined anyway)'),
    'pytest_judgerel.stats.icc.x__ratio__mutmut_4': (
        'return math.inf if (num > 0) or True else math.nan',
        'a zero denominator with a zero numerator is the all-identical matrix, refused before any F ratio'),
    'pytest_judgerel.stats.icc.x__ratio__mutmut_5': (
        'return math.inf if num >= 0 else math.nan',
        'a zero denominator with a zero numerator is the all-identical matrix, refused before any F ratio'),
    'pytest_judgerel.stats.icc.x__step_up__mutmut_12': (
        'return k * rho / den if den != 1 else -math.inf',
        'the step-up is only called above the pole, where 1 + (k-1) rho > 0; the zero-denominator guard is defensive'),
    'pytest_judgerel.stats.icc.x__step_up__mutmut_13': (
        'return k * rho / den if den != 0 else +math.inf',
        'the step-up is only called above the pole, where 1 + (k-1) rho > 0; the zero-denominator guard is defensive'),
    'pytest_judgerel.stats.icc.x__step_up__mutmut_8': (
        'return k * rho / den if (den != 0) or True else -math.inf',
        'the step-up is only called above the pole, where 1 + (k-1) rho > 0; the zero-denominator guard is defensive'),
    'pytest_judgerel.stats.icc.x_icc__mutmut_2': (
        'form: str = "a,1",',
        "canonical_form upper-cases the form: 'a,1' is 'A,1'"),
    # stats/agreement.py
    'pytest_judgerel.stats.agreement.x__d2__mutmut_4': (
        'return (a != b).astype(None)',
        'booleans and integers enter float arithmetic (division, matrix products) as the same numbers'),
    'pytest_judgerel.stats.agreement.x__expected_pairs__mutmut_18': (
        'counts = counts.astype(None)',
        'booleans and integers enter float arithmetic (division, matrix products) as the same numbers'),
    'pytest_judgerel.stats.agreement.x__expected_pairs__mutmut_41': (
        'None)',
        '_d2 treats every metric other than nominal and interval as ratio'),
    'pytest_judgerel.stats.agreement.x__expected_pairs__mutmut_53': (
        '"XXratioXX")',
        '_d2 treats every metric other than nominal and interval as ratio'),
    'pytest_judgerel.stats.agreement.x__expected_pairs__mutmut_54': (
        '"RATIO")',
        '_d2 treats every metric other than nominal and interval as ratio'),
    'pytest_judgerel.stats.agreement.x__paired__mutmut_34': (
        'if np.all(v == v[1]):',
        'v == v[0] everywhere exactly when v == v[1] everywhere, and then v[0] == v[1]'),
    'pytest_judgerel.stats.agreement.x__paired__mutmut_37': (
        'raise ReliabilityError(f"{name} is constant ({float(v[1])!r} for every item): the correlation is undefined")',
        'v == v[0] everywhere exactly when v == v[1] everywhere, and then v[0] == v[1]'),
    'pytest_judgerel.stats.agreement.x_bootstrap_ci__mutmut_67': (
        'warnings.simplefilter("ignore", )',
        'ignores every warning instead of one kind inside the bootstrap call; no result changes'),
    'pytest_judgerel.stats.agreement.x_bootstrap_ci__mutmut_74': (
        'res = stats.bootstrap(data, on_indices, n_resamples=n_resamples, vectorized=None, paired=False,',
        "scipy's defaults: a statistic without an axis argument is not vectorized, and paired=False"),
    'pytest_judgerel.stats.agreement.x_bootstrap_ci__mutmut_82': (
        'res = stats.bootstrap(data, on_indices, n_resamples=n_resamples, paired=False,',
        "scipy's defaults: a statistic without an axis argument is not vectorized, and paired=False"),
    'pytest_judgerel.stats.agreement.x_bootstrap_ci__mutmut_83': (
        'res = stats.bootstrap(data, on_indices, n_resamples=n_resamples, vectorized=False, confidence_level=confidence, method=method, rng=np.random.default_rng(seed))',
        "scipy's defaults: a statistic without an axis argument is not vectorized, and paired=False"),
    'pytest_judgerel.stats.agreement.x_bootstrap_ci__mutmut_93': (
        'if math.isnan(lo) and math.isnan(hi):',
        'scipy returns both limits NaN or neither for a degenerate statistic'),
    'pytest_judgerel.stats.agreement.x_krippendorff_alpha__mutmut_27': (
        'm_u = m[m >= 2].astype(None)',
        'booleans and integers enter float arithmetic (division, matrix products) as the same numbers'),
    'pytest_judgerel.stats.agreement.x_krippendorff_alpha__mutmut_85': (
        'for l in range(j + 1, ):',
        'range(j + 1) visits the pairs (j, l < j) instead of (j, l > j): every unordered pair once either way, plus zero-distance self-pairs'),
    'pytest_judgerel.stats.agreement.x_pearson__mutmut_21': (
        'r = float(np.clip(res.statistic, None, 1.0))',
        'scipy.stats.pearsonr already clips r to [-1, 1]; the clip is a guard against other scipy versions'),
    'pytest_judgerel.stats.agreement.x_pearson__mutmut_22': (
        'r = float(np.clip(res.statistic, -1.0, None))',
        'scipy.stats.pearsonr already clips r to [-1, 1]; the clip is a guard against other scipy versions'),
    'pytest_judgerel.stats.agreement.x_pearson__mutmut_27': (
        'r = float(np.clip(res.statistic, -2.0, 1.0))',
        'scipy.stats.pearsonr already clips r to [-1, 1]; the clip is a guard against other scipy versions'),
    'pytest_judgerel.stats.agreement.x_pearson__mutmut_28': (
        'r = float(np.clip(res.statistic, -1.0, 2.0))',
        'scipy.stats.pearsonr already clips r to [-1, 1]; the clip is a guard against other scipy versions'),
    # stats/consistency.py
    'pytest_judgerel.stats.consistency.x_scale_consistency__mutmut_2': (
        'form: str = "a,1",',
        "canonical_form upper-cases the form: 'a,1' is 'A,1'"),
    # stats/ranking.py
    'pytest_judgerel.stats.ranking.x__count_extreme__mutmut_15': (
        'return int(np.sum(null > observed - tol))',
        '> versus >= at observed -/+ tol: a null value exactly on that boundary is what the tolerance exists to avoid'),
    'pytest_judgerel.stats.ranking.x__count_extreme__mutmut_22': (
        'return int(np.sum(null < observed + tol))',
        '> versus >= at observed -/+ tol: a null value exactly on that boundary is what the tolerance exists to avoid'),
    'pytest_judgerel.stats.ranking.x__count_extreme__mutmut_27': (
        'return int(np.sum(np.abs(null) > abs(observed) - tol))',
        '> versus >= at observed -/+ tol: a null value exactly on that boundary is what the tolerance exists to avoid'),
    'pytest_judgerel.stats.ranking.x_paired_bootstrap__mutmut_21': (
        'idx = rng.choice(n, size=(n_resamples, n), )',
        "replace=True is rng.choice's default"),
    'pytest_judgerel.stats.ranking.x_paired_bootstrap__mutmut_52': (
        'sacre = (int(np.sum(abs_d - abs_d.mean() >= abs(delta_obs))) + 1) / (n_resamples + 1)',
        'needs a resampled |d| - mean|d| exactly equal to |d_obs| in floating point'),
    'pytest_judgerel.stats.ranking.x_paired_permutation__mutmut_55': (
        'masks = ((np.arange(2**n, dtype=np.int64)[:, None] >> np.arange(n - 1, -1, -1)) & 1).astype(None)',
        '0/1 integer masks select exactly like booleans in np.where'),
    'pytest_judgerel.stats.ranking.x_paired_permutation__mutmut_59': (
        'masks = ((np.arange(2**n, dtype=None)[:, None] >> np.arange(n - 1, -1, -1)) & 1).astype(bool)',
        "numpy's default integer is int64 on the supported platforms"),
    'pytest_judgerel.stats.ranking.x_paired_permutation__mutmut_61': (
        'masks = ((np.arange(2**n, )[:, None] >> np.arange(n - 1, -1, -1)) & 1).astype(bool)',
        "numpy's default integer is int64 on the supported platforms"),
    'pytest_judgerel.stats.ranking.x_paired_permutation__mutmut_80': (
        'masks = rng.integers(0, 2, size=(n_resamples, n)).astype(None)',
        '0/1 integer masks select exactly like booleans in np.where'),
    'pytest_judgerel.stats.ranking.x_paired_permutation__mutmut_84': (
        'masks = rng.integers(2, size=(n_resamples, n)).astype(bool)',
        'rng.integers(2) draws from [0, 2) with the same stream as rng.integers(0, 2)'),
    'pytest_judgerel.stats.ranking.x_perm_both__mutmut_64': (
        ')',
        "'greater' is paired_permutation's default alternative"),
    'pytest_judgerel.stats.ranking.x_significance_clusters__mutmut_19': (
        'for i in range(sig.shape[1]):',
        'the matrix is checked to be square just above'),
    # parsing.py
    'pytest_judgerel.judging.parsing.x__axis_name_re__mutmut_12': (
        'parts = [r"(?:&|AND)" if w == "&" else re.escape(w) for w in words]',
        'the axis pattern is compiled with re.IGNORECASE'),
    'pytest_judgerel.judging.parsing.x__axis_values__mutmut_24': (
        'if close <= 0:',
        "the text starts with '(' here, so a ')' is found at index 1 or later, or not at all"),
    'pytest_judgerel.judging.parsing.x__axis_values__mutmut_25': (
        'if close < 1:',
        "the text starts with '(' here, so a ')' is found at index 1 or later, or not at all"),
    'pytest_judgerel.judging.parsing.x__axis_values__mutmut_54': (
        'found.append(stripped[2:])',
        'the character after the dash is checked to be a space or tab; dropping it too changes nothing the number reader sees'),
    'pytest_judgerel.judging.parsing.x__example_score__mutmut_22': (
        'return number_text(round(scale.low + steps * scale.step, 11))',
        'rounding the example to 10 or 11 decimals gives the same number for every grid step a scale accepts'),
    'pytest_judgerel.judging.parsing.x__json_object_text__mutmut_32': (
        'if start < 0 or end <= start:',
        "the first '{' and the last '}' are different characters, never at the same index"),
    'pytest_judgerel.judging.parsing.x__json_object_text__mutmut_8': (
        'if len(fences) >= 1 and len({f.strip() for f in fences}) > 1:',
        'a single fence gives a set of one block, so the second condition is false either way'),
    'pytest_judgerel.judging.parsing.x__norm_key__mutmut_8': (
        'return re.sub(r"[\\s_-]+", "XX_XX", str(k).strip().lower())',
        'both sides of every key comparison go through the same normalisation'),
    'pytest_judgerel.judging.parsing.x__norm_key__mutmut_9': (
        'return re.sub(r"[\\s_-]+", "_", str(k).strip().upper())',
        'both sides of every key comparison go through the same normalisation'),
    'pytest_judgerel.judging.parsing.x__number_in__mutmut_16': (
        'lo_tok, hi_tok = (m.group(1), m.group(2)) if m.group(2) is not None else (m.group(3), m.group(4))',
        "group 2 is set exactly when group 1 is (the two bounds of 'between L and H')"),
    'pytest_judgerel.judging.parsing.x__number_in__mutmut_27': (
        'return "XX XX" if _same(lo, scale.low) and _same(hi, scale.high) else m.group(0)',
        "the removed text is replaced by a filler; the patterns' boundaries guarantee non-word characters around it, so the filler's content cannot join a number"),
    'pytest_judgerel.judging.parsing.x__number_in__mutmut_60': (
        'return "XX XX"',
        "the removed text is replaced by a filler; the patterns' boundaries guarantee non-word characters around it, so the filler's content cannot join a number"),
    'pytest_judgerel.judging.parsing.x__number_in__mutmut_74': (
        'return "XX XX"',
        "the removed text is replaced by a filler; the patterns' boundaries guarantee non-word characters around it, so the filler's content cannot join a number"),
    'pytest_judgerel.judging.parsing.x__number_in__mutmut_88': (
        'return m.group(1)',
        "a non-maximum 'scale of N' is kept as text so that N stays a candidate; keeping only N does the same"),
    'pytest_judgerel.judging.parsing.x__same__mutmut_10': (
        'return abs(a - b) <= 1e-9 * max(1.0, abs(b))',
        'for two numbers within 1e-9 of each other, max(1, |a|) and max(1, |b|) differ by less than the tolerance itself'),
    'pytest_judgerel.judging.parsing.x__same__mutmut_11': (
        'return abs(a - b) <= 1e-9 * max(1.0, abs(a), )',
        'for two numbers within 1e-9 of each other, max(1, |a|) and max(1, |b|) differ by less than the tolerance itself'),
    'pytest_judgerel.judging.parsing.x__same__mutmut_3': (
        'return abs(a - b) < 1e-9 * max(1.0, abs(a), abs(b))',
        '<= versus < at exactly 1e-9 relative distance, which rounding does not produce'),
    'pytest_judgerel.judging.parsing.x__strip_thinking__mutmut_23': (
        'if closed and (not opened or closed.start() <= opened.start()):',
        'an opening and a closing tag cannot start at the same index'),
    'pytest_judgerel.judging.parsing.x__strip_thinking__mutmut_9': (
        'if opened is not None and opened.start() <= pos:',
        're-searching from pos when the opening tag starts exactly at pos finds the same tag'),
    # scales.py
    'pytest_judgerel.scales.xǁScaleǁ__post_init____mutmut_31': (
        'if abs(n - round(n)) >= 1e-9:',
        '> versus >= at exactly 1e-9 off the grid, a distance rounding does not produce'),
    'pytest_judgerel.scales.xǁScaleǁcontains__mutmut_19': (
        'return abs(q - round(q)) <= 1e-9',
        '> versus >= at exactly 1e-9 off the grid, a distance rounding does not produce'),
    # llm/keys.py
    'pytest_judgerel.llm.keys.x_canonical_json__mutmut_4': (
        'return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=None, allow_nan=False)',
        'None is falsy: json.dumps treats it as False'),
    'pytest_judgerel.llm.keys.x_canonical_json__mutmut_5': (
        'return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=None)',
        'None is falsy: json.dumps treats it as False'),
    'pytest_judgerel.llm.keys.x_key_from_fields__mutmut_6': (
        'return hashlib.sha256(canonical_json(dict(fields)).encode("UTF-8")).hexdigest()',
        "codec names are case-insensitive: 'UTF-8' is 'utf-8'"),
    # report/baseline.py
    'pytest_judgerel.report.baseline.x_compare_point__mutmut_11': (
        'mc = MetricComparison(nodeid, name, None, direction, base_v, cur_v, tolerance=tolerance)',
        'the initial status is overwritten on every path before the comparison is returned'),
    'pytest_judgerel.report.baseline.x_compare_point__mutmut_127': (
        'noisy = paired.p_value > tol.alpha',
        'needs a signed-rank p-value exactly equal to alpha'),
    'pytest_judgerel.report.baseline.x_compare_point__mutmut_23': (
        'mc = MetricComparison(nodeid, name, "XXpassXX", direction, base_v, cur_v, tolerance=tolerance)',
        'the initial status is overwritten on every path before the comparison is returned'),
    'pytest_judgerel.report.baseline.x_compare_point__mutmut_24': (
        'mc = MetricComparison(nodeid, name, "PASS", direction, base_v, cur_v, tolerance=tolerance)',
        'the initial status is overwritten on every path before the comparison is returned'),
    'pytest_judgerel.report.baseline.x_compare_point__mutmut_75': (
        'if worse < tolerance + _EPS:',
        '< versus <= at tolerance + 1e-9 exactly; the 1e-9 margin exists so that no change sits on the boundary'),
    'pytest_judgerel.report.baseline.x_compare_point__mutmut_83': (
        'mc.status = "improved" if -worse >= tolerance + _EPS else "pass"',
        '< versus <= at tolerance + 1e-9 exactly; the 1e-9 margin exists so that no change sits on the boundary'),
    'pytest_judgerel.report.baseline.x_compare_report__mutmut_87': (
        'e.get("value"), reason="in the baseline but not recorded by this run"))',
        "current=None is MetricComparison's default"),
    'pytest_judgerel.report.baseline.x_compare_with_file__mutmut_9': (
        'comp = BaselineComparison(os.fspath(path), True, )',
        "Tolerances() is BaselineComparison's default"),
    # report/gate.py
    'pytest_judgerel.report.gate.x__probe_writable__mutmut_12': (
        'fd, tmp = tempfile.mkstemp(prefix=None, dir=folder)',
        "the probe file's name is never seen: mkstemp picks a fresh name in the same folder and it is removed at once"),
    'pytest_judgerel.report.gate.x__probe_writable__mutmut_14': (
        'fd, tmp = tempfile.mkstemp(dir=folder)',
        "the probe file's name is never seen: mkstemp picks a fresh name in the same folder and it is removed at once"),
    'pytest_judgerel.report.gate.x__probe_writable__mutmut_16': (
        'fd, tmp = tempfile.mkstemp(prefix="XX.judgerel-probe-XX", dir=folder)',
        "the probe file's name is never seen: mkstemp picks a fresh name in the same folder and it is removed at once"),
    'pytest_judgerel.report.gate.x__probe_writable__mutmut_17': (
        'fd, tmp = tempfile.mkstemp(prefix=".JUDGEREL-PROBE-", dir=folder)',
        "the probe file's name is never seen: mkstemp picks a fresh name in the same folder and it is removed at once"),
    'pytest_judgerel.report.gate.x_apply_outputs__mutmut_135': (
        'outputs.pop("json", )',
        "the key was set two lines above, inside the same try: pop needs no default"),
    'pytest_judgerel.report.gate.x_evaluate_gate__mutmut_21': (
        'tol = None',
        'compare_with_file falls back to Tolerances() for None'),
    # mindeval/metrics.py
    'pytest_judgerel.mindeval.metrics.x__profile_of__mutmut_14': (
        'return str(iid).split("::", )[0] if iid else str(index)',
        'the first field of a split is the same whatever the maximum number of splits'),
    'pytest_judgerel.mindeval.metrics.x__profile_of__mutmut_18': (
        'return str(iid).split("::", 2)[0] if iid else str(index)',
        'the first field of a split is the same whatever the maximum number of splits'),
    'pytest_judgerel.mindeval.metrics.x__vector__mutmut_14': (
        'out.append(np.nan if (s is None) and False else s)',
        'np.asarray(dtype=float) turns None into NaN; the list holds only floats and NaN'),
    'pytest_judgerel.mindeval.metrics.x__vector__mutmut_20': (
        'return np.asarray(out, dtype=None)',
        'np.asarray(dtype=float) turns None into NaN; the list holds only floats and NaN'),
    'pytest_judgerel.mindeval.metrics.x__vector__mutmut_22': (
        'return np.asarray(out, )',
        'np.asarray(dtype=float) turns None into NaN; the list holds only floats and NaN'),
    'pytest_judgerel.mindeval.metrics.x__vector__mutmut_3': (
        'out.append(None)',
        'np.asarray(dtype=float) turns None into NaN; the list holds only floats and NaN'),
    'pytest_judgerel.mindeval.metrics.x_sentence_count__mutmut_14': (
        'cleaned = _ABBREV.sub(lambda m: m.group(0).replace(".", "XXXX"), text or "")',
        'the replacement only has to remove the period; XXXX contains no sentence end'),
}
