#pragma once
// The numbers behind each view, as CSV (File > Export view data, and the headless export): what
// a user takes to a notebook instead of a picture. Plain text, no Qt; fields quoted as every
// command's CSV (models/io/csv_text.hpp). Times in seconds, work as fractions of one full block.
#include <string>
#include <vector>

#include "gui/compare.hpp"
#include "gui/run.hpp"

namespace ringsim::gui {

// layout,device,round,kv_block_of,visited_area,allowed_pairs,tiles_computed: every cell of the
// heatmaps, each metric a fraction of one full block (the colours' values).
[[nodiscard]] std::string heatmap_csv(const RunResult& result);

// lane,kind,name,round,start_s,end_s: every span of the timeline (waits included).
[[nodiscard]] std::string timeline_csv(const Timeline& timeline);

// Of the all-rounds attention matrix: q_device,q_tile,kv_device,k_tile,round for every tile a
// device's kernel computes (token order is the layout's; tiles in device-slot order). Throws
// models::InputError above `max_rows` computed tiles (the file would be gigabytes).
[[nodiscard]] std::string matrix_csv(const LayoutRun& run, std::int64_t max_rows = 4'000'000);

// layout,quantity,key,value_s: the Charts tab's data: the step over the sweep's lengths
// ("step", key n_seq; empty where a length cannot be split) and the step's parts ("part", key
// the part's name as predict's CSV names it).
[[nodiscard]] std::string charts_csv(const RunResult& result);

// strategy,impl,kernel,layout,step_s,step_lo_s,step_hi_s,why,refused: the Compare tab's rows.
[[nodiscard]] std::string compare_csv(const std::vector<CompareRow>& rows);

}  // namespace ringsim::gui
