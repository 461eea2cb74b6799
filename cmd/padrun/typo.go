package main

// nearVerb returns the verb that name is most likely a typo of, or "".
func nearVerb(name string) string {
	best, bestD := "", 3
	if len(name) < 2 {
		return ""
	}
	for _, v := range shownVerbs() {
		limit := 2
		if len(v.name) <= 3 {
			limit = 1
		}
		if d := editDistance(name, v.name); d > 0 && d <= limit && d < bestD {
			best, bestD = v.name, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of two neighbours each cost one.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
