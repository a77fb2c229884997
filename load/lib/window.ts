/**
 * The measured window of a capacity step, as plain data shared by the k6 script (which marks it) and Node (which
 * reads the marks from k6's raw output). Each mark is one sample of WINDOW_METRIC made by a scenario of its own,
 * started by k6's scheduler at the moment the window opens or closes, so the window is where the schedule put
 * it, whatever the VUs were doing.
 */
export const WINDOW_METRIC = 'momo_window_marks';

/** The scenarios whose one iteration marks each end of the window. */
export const WINDOW_MARKS = { opens: 'window-opens', closes: 'window-closes' } as const;
