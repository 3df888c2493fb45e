"""check_doc_names.py against a small tree: what resolves, and what a rename leaves pointing nowhere."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_doc_names  # noqa: E402

FILES = {
    "src/lib.rs": "mod engine;\npub use engine::send::{isend, Msg as Message};\n",
    "src/engine/mod.rs": "pub mod send;\npub mod cut;\npub use cut::*;\n",
    "src/engine/send.rs": "pub fn isend() {}\npub struct Msg {\n    pub size: usize,\n}\n"
                          "impl Msg {\n    pub fn post(&self) {}\n}\n",
    "src/engine/cut.rs": "pub enum Rule {\n    Idle,\n    Spread(usize),\n}\npub fn idle_chunk() {}\n"
                         "#[cfg(test)]\nmod tests {\n    #[test]\n    fn cuts_whole_pages() {}\n}\n",
    "tests/spread.rs": "#[test]\nfn a_message_is_spread() {}\n",
}


class Resolve(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        for rel, text in FILES.items():
            path = os.path.join(self.dir.name, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        self.code = check_doc_names.Code(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def miss(self, path):
        return self.code.resolves(path.split("::"))

    def test_paths_that_name_something_where_they_say(self):
        for path in ["send::isend", "engine::send::Msg", "Msg::post", "Msg::size", "send::Msg::post",
                     "cut::Rule::Spread", "engine::idle_chunk", "crate::isend", "crate::Message",
                     "cut::tests::cuts_whole_pages", "spread::a_message_is_spread", "engine::cut"]:
            self.assertIsNone(self.miss(path), path)

    def test_a_moved_or_renamed_name_is_reported_at_the_first_part_not_found(self):
        self.assertEqual(self.miss("send::idle_chunk"), "idle_chunk")   # lives in cut
        self.assertEqual(self.miss("cut::Rule::Streaming"), "Streaming")
        self.assertEqual(self.miss("send::tests::cuts_whole_pages"), "tests")
        self.assertEqual(self.miss("spread::Spread"), "Spread")
        self.assertEqual(self.miss("striper::chunk"), "striper")


if __name__ == "__main__":
    unittest.main()
